/** The explorer's static server: the given scenario in index.html (escaped), only the folder's files, same-origin policy, one-line errors. */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import * as os from 'os';
import * as path from 'path';
import { pageWithInitial, serveExplorer } from '../src/io/explorer-server';
import { ScenarioValidationError } from '../src/model/validation-error';
import { ROOT } from './helpers/fixtures';

const SLOT = '<script id="initial" type="application/json">null</script>';
const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'scaleacross-explorer-'));
fs.writeFileSync(path.join(folder, 'index.html'), `<!DOCTYPE html><html><head>${SLOT}</head><body></body></html>`);
fs.writeFileSync(path.join(folder, 'page.js'), 'void 0;');
fs.writeFileSync(path.join(folder, 'highs.wasm'), Buffer.from([0, 97, 115, 109]));

/** GET with the path sent as written (no normalisation of `..`). */
function get(url: string, rawPath: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(url);
    http.get({ hostname, port, path: rawPath }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => { body += chunk.toString(); });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    }).on('error', reject);
  });
}

describe('explorer server', () => {
  it('puts the scenario into index.html so that no text in it can close the script', () => {
    const initial = { spec: { name: '</script><script>alert(1)</script>', note: 'a\u2028b' }, calibration: { file: 'p.json', profile: { version: 1 } } };
    const html = pageWithInitial(`<p>${SLOT}</p>`, initial);
    expect(html).not.toContain('</script><script>');
    const json = /<script id="initial" type="application\/json">(.*)<\/script><\/p>$/.exec(html)![1]!;
    expect(JSON.parse(json)).toEqual(initial);
  });

  it('serves the folder\'s files with their types and a same-origin policy, and nothing else', async () => {
    const server = await serveExplorer(folder, { spec: { name: 'given' } }, 0);
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      const index = await get(server.url, '/');
      expect(index.status).toBe(200);
      expect(index.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(index.body).toContain('{"spec":{"name":"given"}}');
      expect(index.headers['content-security-policy']).toMatch(/default-src 'self'/);
      expect((await get(server.url, '/highs.wasm')).headers['content-type']).toBe('application/wasm');
      expect((await get(server.url, '/page.js')).status).toBe(200);
      expect((await get(server.url, '/missing.js')).status).toBe(404);
      expect((await get(server.url, '/../package.json')).status).toBe(404);
      expect((await get(server.url, '/%2e%2e/package.json')).status).toBe(404);
    } finally {
      await server.close();
    }
  });

  it('reports a port in use and an unbuilt page on one line', async () => {
    const first = await serveExplorer(folder, undefined, 0);
    try {
      const port = Number(new URL(first.url).port);
      await expect(serveExplorer(folder, undefined, port)).rejects.toThrow(`explore: port ${port} is in use: choose another with --port`);
    } finally {
      await first.close();
    }
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'scaleacross-explorer-empty-'));
    expect(() => serveExplorer(empty, undefined, 0)).toThrow(ScenarioValidationError);
    expect(() => serveExplorer(empty, undefined, 0)).toThrow(`${empty}: the explorer page is not built: run \`npm run explorer\``);
  });
});

describe('scaleacross explore: bad input', () => {
  const cli = (...argv: string[]) => spawnSync(process.execPath, [path.join(ROOT, 'dist', 'src', 'cli', 'main.js'), 'explore', ...argv, '--no-open'], { encoding: 'utf8', timeout: 30_000 });
  const invalid = path.join(folder, 'invalid.json');
  fs.writeFileSync(invalid, JSON.stringify({ version: 1, name: 'x', model: { name: 'm' }, training: { seqLen: 8192, globalBatchSeqs: 8 }, cluster: { sites: [] } }));

  it.each([
    [[path.join(folder, 'missing.json')], `${path.join(folder, 'missing.json')}: no such file`],
    [['--port', '70000'], 'scaleacross: --port must be an integer in [0, 65535] (see scaleacross --help)'],
  ])('%j exits 2 with one line and serves nothing', (argv, line) => {
    const result = cli(...argv);
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim()).toBe(line);
  });

  it('an invalid scenario exits 2 with the messages plan prints, one line each', () => {
    const explore = cli(invalid);
    const plan = spawnSync(process.execPath, [path.join(ROOT, 'dist', 'src', 'cli', 'main.js'), 'plan', invalid], { encoding: 'utf8', timeout: 30_000 });
    expect(explore.status).toBe(2);
    expect(explore.stderr).toBe(plan.stderr);
    expect(explore.stderr).toMatch(/^.*invalid\.json: model\.layers: /m);
    expect(explore.stderr).not.toMatch(/undefined|\n\s+at /);
  });
});
