import { mkdtempSync, readFileSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { markdownOption, replaceSection, writeSection } from '../bench/markdown-section';

const DOC = [
  '# Benchmarks',
  '',
  'Hand-written text before.',
  '<!-- bench:alpha -->',
  '| old | alpha |',
  '<!-- /bench:alpha -->',
  'Text between.',
  '<!-- bench:beta -->',
  '| old | beta |',
  '<!-- /bench:beta -->',
  'Text after.',
  '',
].join('\n');

describe('replaceSection', () => {
  it('replaces only the block of its section, markers and everything else kept', () => {
    const out = replaceSection(DOC, 'alpha', ['| new | alpha |', '| second | row |']);
    expect(out).toBe(DOC.replace('| old | alpha |', '| new | alpha |\n| second | row |'));
    expect(out).toContain('| old | beta |');
    // Writing the same lines again changes nothing.
    expect(replaceSection(out, 'alpha', ['| new | alpha |', '| second | row |'])).toBe(out);
  });

  it('takes text with $ signs literally', () => {
    expect(replaceSection(DOC, 'beta', ['cost $1 and $& and $$'])).toContain('<!-- bench:beta -->\ncost $1 and $& and $$\n<!-- /bench:beta -->');
  });

  it('fails clearly when the markers are missing', () => {
    expect(() => replaceSection(DOC, 'gamma', ['x'])).toThrow('section "gamma" not found: the file needs a line <!-- bench:gamma --> and, below it, a line <!-- /bench:gamma -->');
    expect(() => replaceSection(DOC.replace('<!-- /bench:beta -->', ''), 'beta', ['x'])).toThrow('section "beta" not found');
  });

  it('fails when a section is marked twice or its markers are out of order', () => {
    expect(() => replaceSection(`${DOC}<!-- bench:alpha -->\n<!-- /bench:alpha -->\n`, 'alpha', ['x'])).toThrow('marked more than once');
    const swapped = DOC.replace('<!-- bench:alpha -->', '@').replace('<!-- /bench:alpha -->', '<!-- bench:alpha -->').replace('@', '<!-- /bench:alpha -->');
    expect(() => replaceSection(swapped, 'alpha', ['x'])).toThrow('comes before');
  });
});

describe('writeSection', () => {
  it('rewrites the section in the file and leaves a file without the markers untouched', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'markdown-section-'));
    const file = path.join(dir, 'benchmarks.md');
    writeFileSync(file, DOC);
    writeSection(file, 'beta', ['| new | beta |']);
    expect(readFileSync(file, 'utf8')).toBe(DOC.replace('| old | beta |', '| new | beta |'));
    const bare = path.join(dir, 'bare.md');
    writeFileSync(bare, '# no markers\n');
    expect(() => writeSection(bare, 'beta', ['x'])).toThrow('section "beta" not found');
    expect(readFileSync(bare, 'utf8')).toBe('# no markers\n');
  });
});

describe('markdownOption', () => {
  it('takes --markdown FILE out of the arguments wherever it is', () => {
    expect(markdownOption(['10', '--markdown', 'docs/benchmarks.md', '3'])).toEqual({ markdownFile: 'docs/benchmarks.md', args: ['10', '3'] });
    expect(markdownOption(['--markdown', 'a.md'])).toEqual({ markdownFile: 'a.md', args: [] });
    expect(markdownOption(['10'])).toEqual({ args: ['10'] });
    expect(() => markdownOption(['10', '--markdown'])).toThrow('--markdown needs a file');
  });
});
