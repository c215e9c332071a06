/** Writes schemas/*.json from the zod schemas (`npm run schemas`). */
import * as fs from 'fs';
import * as path from 'path';
import { jsonSchemas } from '../src/model/json-schemas';

const folder = path.join(__dirname, '..', '..', 'schemas');
fs.mkdirSync(folder, { recursive: true });
for (const [file, schema] of Object.entries(jsonSchemas())) {
  fs.writeFileSync(path.join(folder, file), `${JSON.stringify(schema, null, 2)}\n`);
  console.log(`wrote schemas/${file}`);
}
