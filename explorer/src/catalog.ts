/** The models the editor offers, computed at build time by catalog-data.ts (scripts/build-explorer.js defines the constant). */
import type { ModelObject } from './catalog-data';

declare const __MODEL_CATALOG__: readonly ModelObject[];

export type { ModelObject };
export const MODEL_CATALOG: readonly ModelObject[] = __MODEL_CATALOG__;
