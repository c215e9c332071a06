/** Small DOM functions: elements from a tag, attributes and children; text is never parsed as HTML. */

export type Child = Node | string | undefined | false;

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Record<string, string | undefined> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) if (value !== undefined) element.setAttribute(name, value);
  for (const child of children) if (child !== undefined && child !== false) element.append(child);
  return element;
}

/** An element holding SVG markup made by the library's drawings (their text is escaped there). */
export function svgBox(markup: string, className: string): HTMLDivElement {
  const box = el('div', { class: className });
  box.innerHTML = markup;
  return box;
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`the page has no #${id}`);
  return element as T;
}

/** Offers `text` as a download named `file`. */
export function download(file: string, text: string, type = 'application/json'): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = el('a', { href: url, download: file });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
