/** Walking and editing JSON documents in place, for the fuzz tests' mutations. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Path = (string | number)[];

/** Every path in the document, the root (`[]`) first. */
function pathsOf(v: Json, prefix: Path = [], out: Path[] = []): Path[] {
  out.push(prefix);
  if (Array.isArray(v)) v.forEach((x, i) => pathsOf(x, [...prefix, i], out));
  else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) pathsOf(x, [...prefix, k], out);
  return out;
}

function getAt(v: Json, path: Path): Json | undefined {
  let cur: Json | undefined = v;
  for (const seg of path) cur = cur !== null && typeof cur === 'object' ? (cur as Record<string | number, Json>)[seg] : undefined;
  return cur;
}

const isObj = (v: Json | undefined): v is { [key: string]: Json } => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Sets an own property, even `__proto__` (as JSON.parse does). */
function put(obj: { [key: string]: Json }, key: string, value: Json): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** One edit at the `at`-th path (modulo the number of paths) of a document. */
export type Mutation =
  | { op: 'delete' | 'duplicate'; at: number }
  | { op: 'retype'; at: number; value: Json }
  | { op: 'unknownKey'; at: number; key: string; value: Json }
  | { op: 'payloadType'; at: number; value: string }
  | { op: 'longArray'; at: number; length: number };

/** Applies the mutations in turn to a deep copy of `doc`. */
export function mutate(doc: Json, mutations: readonly Mutation[]): Json {
  let root = structuredClone(doc);
  for (const m of mutations) {
    const paths = pathsOf(root);
    const path = paths[m.at % paths.length] ?? [];
    const parent = path.length === 0 ? undefined : getAt(root, path.slice(0, -1));
    const key = path[path.length - 1];
    const node = getAt(root, path) ?? null;
    const replace = (value: Json): void => {
      if (parent === undefined || key === undefined) root = value;
      else if (Array.isArray(parent)) parent[key as number] = value;
      else if (isObj(parent)) put(parent, String(key), value);
    };
    switch (m.op) {
      case 'delete':
        if (Array.isArray(parent)) parent.splice(key as number, 1);
        else if (isObj(parent)) delete parent[String(key)];
        else root = null;
        break;
      case 'duplicate':
        if (Array.isArray(node) && node.length > 0) node.push(structuredClone(node[0] as Json));
        else replace([node, structuredClone(node)]);
        break;
      case 'retype':
        replace(m.value);
        break;
      case 'unknownKey':
        if (isObj(node)) put(node, m.key, m.value);
        else if (isObj(parent)) put(parent, m.key, m.value);
        break;
      case 'payloadType': {
        const holder = isObj(node) ? node : isObj(parent) ? parent : undefined;
        if (holder) put(holder, 'payloadType', m.value);
        break;
      }
      case 'longArray':
        replace(Array.from({ length: m.length }, () => (Array.isArray(node) && node.length > 0 ? (node[0] as Json) : node)));
        break;
    }
  }
  return root;
}
