/**
 * `scaleacross import-model <config.json> [--name N]`: prints the scenario's `model` object for
 * a Hugging Face config.json (docs/cost-model.md §1.1). Unknown keys exit 2, one line each.
 */
import * as path from 'path';
import { loadHfModel } from '../../index';
import { EXIT, type Output } from '../exit-codes';

/**
 * The default model name: the folder of a file named config.json (the layout of a Hugging Face
 * download, `Qwen3-8B/config.json`), otherwise the file name without `.json`.
 */
export function defaultModelName(file: string): string {
  const base = path.basename(file);
  if (base === 'config.json') {
    const folder = path.basename(path.dirname(path.resolve(file)));
    if (folder !== '') return folder;
  }
  return base.replace(/\.json$/, '') || base;
}

export function runImportModel(file: string, name: string | undefined, output: Output): number {
  const model = loadHfModel(file, name ?? defaultModelName(file));
  output.out(JSON.stringify(model, null, 2));
  return EXIT.ok;
}
