/** Walking and editing JSON documents in place, for the fuzz tests' mutations. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Path = (string | number)[];

/** Every path in the document, the root (`[]`) first. */
export function pathsOf(v: Json, prefix: Path = [], out: Path[] = []): Path[] {
  out.push(prefix);
  if (Array.isArray(v)) v.forEach((x, i) => pathsOf(x, [...prefix, i], out));
  else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) pathsOf(x, [...prefix, k], out);
  return out;
}

export function getAt(v: Json, path: Path): Json | undefined {
  let cur: Json | undefined = v;
  for (const seg of path) cur = cur !== null && typeof cur === 'object' ? (cur as Record<string | number, Json>)[seg] : undefined;
  return cur;
}

export const isObj = (v: Json | undefined): v is { [key: string]: Json } => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Sets an own property, even `__proto__` (as JSON.parse does). */
export function put(obj: { [key: string]: Json }, key: string, value: Json): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}
