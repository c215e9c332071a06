/** Escaping of text and attribute values put into HTML or SVG (scenario and site names are user input). */
const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string | number): string {
  return String(text).replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

/** Seconds with three significant decimals, or milliseconds below 0.1 s. */
export function formatSeconds(s: number): string {
  if (!Number.isFinite(s)) return 'none';
  return s >= 0.1 ? `${s.toFixed(3)} s` : `${(s * 1000).toFixed(2)} ms`;
}

export const formatPercent = (x: number): string => `${(100 * x).toFixed(1)}%`;

/** Fixed-point SVG coordinates. */
export const px = (x: number): string => (Math.round(x * 100) / 100).toString();
