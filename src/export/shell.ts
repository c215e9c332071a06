/** Small helpers for the bundle's bash scripts. Pure. */

/** A value as one bash word: bare when it is safe, else single-quoted. */
export function shellWord(value: string): string {
  return /^[\w.,+=:/@%-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * Integers as bash array words, arithmetic runs of three or more written as brace expansions
 * (`{0..504..8}`), so that a site's 1,024 node offsets stay one short line.
 */
export function bashIntList(values: readonly number[]): string {
  const words: string[] = [];
  let i = 0;
  while (i < values.length) {
    const step = i + 1 < values.length ? values[i + 1]! - values[i]! : 0;
    let j = i + 1;
    if (step > 0) while (j + 1 < values.length && values[j + 1]! - values[j]! === step) j++;
    if (step > 0 && j - i >= 2) {
      words.push(step === 1 ? `{${values[i]}..${values[j]}}` : `{${values[i]}..${values[j]}..${step}}`);
      i = j + 1;
    } else {
      words.push(String(values[i]));
      i++;
    }
  }
  return words.join(' ');
}

/** A name as a file-name part: letters, digits, '.', '_' and '-' kept, anything else '-'. */
export function fileSafe(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, '-');
}

/** A name as a Kubernetes DNS label part: lower case, letters, digits and '-', at most `max` characters. */
export function dnsLabel(name: string, max: number): string {
  const label = name.toLowerCase().replace(/[^a-z0-9-]/g, '-').replace(/-+/g, '-').slice(0, max).replace(/^-+|-+$/g, '');
  return label === '' ? 'x' : label;
}

/** Text for a `#` comment line: control characters (a newline would end the comment) become spaces. */
export function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ');
}
