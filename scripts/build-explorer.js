#!/usr/bin/env node
/**
 * Builds the explorer page into explorer/dist: page.js and worker.js bundled with esbuild from
 * explorer/src (the worker bundles the library from src/), index.html, style.css and HiGHS's
 * highs.wasm, so that the folder works from any static host. Run by `npm run explorer` and
 * during `prepare`.
 */
const fs = require('fs');
const path = require('path');
const esbuild = require('esbuild');

const root = path.join(__dirname, '..');
const source = path.join(root, 'explorer');
const out = path.join(source, 'dist');

/** Node's built-ins resolve to an empty module: only the library's Node-only backends import them. */
const NODE_ONLY = /^(node:)?(fs|fs\/promises|path|os|worker_threads|child_process|crypto)$/;
const nodeStub = {
  name: 'node-stub',
  setup(build) {
    build.onResolve({ filter: NODE_ONLY }, () => ({ path: path.join(source, 'src', 'node-stub.cjs') }));
    // The CommonJS loader the CLI's workers load (the ES module one imports node:module at the top).
    build.onResolve({ filter: /^highs$/ }, () => ({ path: require.resolve('highs') }));
  },
};

/** The editor's model list, computed here (explorer/src/catalog-data.ts) so that the page does not carry the importer. */
async function modelCatalog() {
  const built = await esbuild.build({ entryPoints: [path.join(source, 'src', 'catalog-data.ts')], bundle: true, platform: 'node', format: 'cjs', write: false, logLevel: 'warning' });
  const module = { exports: {} };
  new Function('module', 'exports', 'require', built.outputFiles[0].text)(module, module.exports, require);
  return module.exports.buildModelCatalog();
}

async function main() {
  const started = Date.now();
  const catalog = await modelCatalog();
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  await esbuild.build({
    entryPoints: { page: path.join(source, 'src', 'page.ts'), worker: path.join(source, 'src', 'worker.ts') },
    outdir: out,
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'warning',
    define: { 'process.env.NODE_ENV': '"production"', __MODEL_CATALOG__: JSON.stringify(catalog) },
    plugins: [nodeStub],
  });
  for (const file of ['index.html', 'style.css']) fs.copyFileSync(path.join(source, file), path.join(out, file));
  fs.copyFileSync(path.join(path.dirname(require.resolve('highs')), 'highs.wasm'), path.join(out, 'highs.wasm'));
  const size = (f) => `${(fs.statSync(path.join(out, f)).size / 1024).toFixed(0)} KiB`;
  process.stdout.write(`explorer/dist: page.js ${size('page.js')}, worker.js ${size('worker.js')}, highs.wasm ${size('highs.wasm')} (${Date.now() - started} ms)\n`);
}

main().catch((error) => {
  process.stderr.write(`explorer build failed: ${error.message}\n`);
  process.exitCode = 1;
});
