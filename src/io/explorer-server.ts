/**
 * Serves the built explorer page (explorer/dist) on 127.0.0.1 with Node's http module. The page
 * is static; the only thing served differently is index.html, which carries the scenario given to
 * `explore`. Only the files of the folder are served; the Content-Security-Policy lets the page
 * load nothing from any other origin.
 */
import * as fs from 'fs';
import * as http from 'http';
import * as path from 'path';
import { ScenarioValidationError } from '../model/validation-error';

/** The package's root folder, from dist/src/io (built) or src/io (TypeScript sources under ts-jest). */
export const PACKAGE_ROOT = __filename.endsWith('.ts') ? path.join(__dirname, '..', '..') : path.join(__dirname, '..', '..', '..');

/** Where `npm run explorer` (and prepare) builds the page: explorer/dist at the package root. */
export const EXPLORER_DIST = path.join(PACKAGE_ROOT, 'explorer', 'dist');

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm', '.json': 'application/json', '.png': 'image/png', '.svg': 'image/svg+xml',
};

/** Same origin only; WebAssembly compiled from the page's own highs.wasm; inline styles for the drawings' attributes. */
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'";

/** The placeholder in index.html that what `explore` was given replaces. */
const INITIAL_SLOT = '<script id="initial" type="application/json">null</script>';

/** What the page opens with: the scenario spec as written, and the calibration profile it names (read here: the page reads no files). */
export interface ExplorerInitial {
  readonly spec: unknown;
  readonly calibration?: { readonly file: string; readonly profile: unknown };
}

export interface ExplorerServer {
  readonly url: string;
  close(): Promise<void>;
}

/** index.html with `initial` in its slot (`<` escaped so that the JSON cannot close the script). */
export function pageWithInitial(html: string, initial: ExplorerInitial | undefined): string {
  if (initial === undefined) return html;
  const json = JSON.stringify(initial).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
  return html.replace(INITIAL_SLOT, () => `<script id="initial" type="application/json">${json}</script>`);
}

/** Reads the built page into memory; a folder without index.html is a one-line error naming it. */
function readPage(folder: string, initial: ExplorerInitial | undefined): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  let names: string[];
  try {
    names = fs.readdirSync(folder).filter((name) => TYPES[path.extname(name)] !== undefined);
  } catch {
    names = [];
  }
  if (!names.includes('index.html')) throw new ScenarioValidationError([{ path: '', message: 'the explorer page is not built: run `npm run explorer`' }], folder);
  for (const name of names) files.set(`/${name}`, fs.readFileSync(path.join(folder, name)));
  files.set('/index.html', Buffer.from(pageWithInitial(files.get('/index.html')!.toString('utf8'), initial)));
  return files;
}

/** Starts serving; `port` 0 takes a free one. A port in use is a one-line error. */
export function serveExplorer(folder: string, initial: ExplorerInitial | undefined, port: number): Promise<ExplorerServer> {
  const files = readPage(folder, initial);
  const server = http.createServer((request, response) => {
    const pathname = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    const body = files.get(pathname === '/' ? '/index.html' : pathname);
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { Allow: 'GET, HEAD' }).end();
    } else if (!body) {
      response.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('not found\n');
    } else {
      const name = pathname === '/' ? 'index.html' : pathname;
      response.writeHead(200, { 'Content-Type': TYPES[path.extname(name)]!, 'Content-Length': body.length, 'Cache-Control': 'no-store', 'Content-Security-Policy': CSP, 'X-Content-Type-Options': 'nosniff' });
      response.end(request.method === 'HEAD' ? undefined : body);
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const reason = error.code === 'EADDRINUSE' ? `port ${port} is in use: choose another with --port` : error.code === 'EACCES' ? `port ${port} is not allowed: choose another with --port` : `cannot listen on port ${port} (${error.code ?? error.message})`;
      reject(new ScenarioValidationError([{ path: '', message: reason }], 'explore'));
    });
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const actual = typeof address === 'object' && address ? address.port : port;
      resolve({
        url: `http://127.0.0.1:${actual}/`,
        close: () => new Promise<void>((done) => { server.closeAllConnections(); server.close(() => done()); }),
      });
    });
  });
}
