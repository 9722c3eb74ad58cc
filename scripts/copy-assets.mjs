// tsc compiles only TypeScript; data files under src/ (device profiles, SQL, page assets) are
// copied to the same relative place under dist/ so the built daemon finds them.
import { cpSync, readdirSync, statSync, mkdirSync } from 'node:fs';
import { join, relative, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const assetExt = /\.(ya?ml|json|sql|svg|css|html)$/;

function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (assetExt.test(name)) {
      const target = join(root, 'dist', relative(join(root, 'src'), path));
      mkdirSync(dirname(target), { recursive: true });
      cpSync(path, target);
    }
  }
}
walk(join(root, 'src'));
