/**
 * Cache keys made of every field of a cached function's input. The fields are listed once, next
 * to the cache, and the compiler checks the list against the input's type: a field added to the
 * type later (e.g. to `StageTimePlan`) fails the build at the list until it is keyed, instead of
 * letting the cache serve values computed for another input.
 */

/** The fields of T that `F` leaves out (never when it lists them all). */
export type UnlistedFields<T, F extends readonly PropertyKey[]> = Exclude<keyof T, F[number]>;

/** Accepts `F` only when it lists every field of T; otherwise the error names the ones it leaves out. */
export type EveryFieldOf<T, F extends readonly PropertyKey[]> = [UnlistedFields<T, F>] extends [never] ? F : F & { readonly unlistedFields: UnlistedFields<T, F> };

/** A key function over a fixed list of fields, with the list it reads. */
export interface FieldKey<T> {
  (value: T): string;
  readonly fields: readonly (keyof T)[];
}

/**
 * `fieldKey<T>()(['a', 'b'])`: a function from T to a string that differs whenever one of the
 * listed fields differs (numbers and strings as written, other values as JSON). Every field of T
 * must be listed.
 */
export function fieldKey<T extends object>() {
  return <const F extends readonly (keyof T)[]>(fields: EveryFieldOf<T, F>): FieldKey<T> => {
    const list: readonly (keyof T)[] = fields;
    const key = (value: T): string => {
      let text = '';
      for (const field of list) {
        const v: unknown = value[field];
        text += (typeof v === 'object' ? JSON.stringify(v) : String(v)) + '|';
      }
      return text;
    };
    return Object.assign(key, { fields: list });
  };
}
