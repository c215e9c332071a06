/**
 * Finds where JSON text first stops being valid, because V8's JSON.parse messages on Node 20
 * do not always carry a position. A small recursive-descent scanner; it validates, it builds nothing.
 */

/** Offset of the first syntax error in `text`, or undefined if the text is valid JSON. */
export function jsonErrorOffset(text: string): number | undefined {
  let at = 0;
  const fail = (): never => { throw at; };
  const skipSpace = () => { while (at < text.length && ' \t\n\r'.includes(text[at]!)) at++; };
  const expect = (literal: string) => {
    for (const ch of literal) { if (text[at] !== ch) fail(); at++; }
  };
  const string = () => {
    expect('"');
    while (at < text.length && text[at] !== '"') {
      const code = text.charCodeAt(at);
      if (code < 0x20) fail();
      if (text[at] === '\\') {
        at++;
        if (text[at] === 'u') { at++; for (let i = 0; i < 4; i++) { if (!/[0-9a-fA-F]/.test(text[at] ?? '')) fail(); at++; } }
        else if ('"\\/bfnrt'.includes(text[at] ?? '!')) at++;
        else fail();
      } else at++;
    }
    expect('"');
  };
  const number = () => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(at, at + 400));
    if (!match || match[0] === '' || match[0] === '-') fail();
    at += match![0].length;
  };
  const value = (): void => {
    skipSpace();
    const ch = text[at];
    if (ch === '{') {
      at++; skipSpace();
      if (text[at] === '}') { at++; return; }
      for (;;) {
        skipSpace(); string(); skipSpace(); expect(':'); value(); skipSpace();
        if (text[at] === ',') { at++; continue; }
        expect('}'); return;
      }
    }
    if (ch === '[') {
      at++; skipSpace();
      if (text[at] === ']') { at++; return; }
      for (;;) {
        value(); skipSpace();
        if (text[at] === ',') { at++; continue; }
        expect(']'); return;
      }
    }
    if (ch === '"') return string();
    if (ch === 't') return expect('true');
    if (ch === 'f') return expect('false');
    if (ch === 'n') return expect('null');
    return number();
  };
  try {
    value();
    skipSpace();
    return at < text.length ? at : undefined;
  } catch (offset) {
    if (typeof offset === 'number') return offset;
    return undefined; // RangeError from absurd nesting: leave it to JSON.parse's own message.
  }
}
