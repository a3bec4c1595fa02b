import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The forwarding features are a one-way stack (issue 10, item 7):
 *   targets ← vault-forward-configs ← forward-authentications ← forwarding ← queued forwarding
 * A folder may import from the folders to its left, never from those to its right.
 */
const STACK = ['targets', 'vault-forward-configs', 'forward-authentications', 'forwarding'];
const SRC = resolve(__dirname, '../../src');

function tsFiles(dir: string): string[] {
  let out: string[] = [];
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out = out.concat(tsFiles(path));
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

function importedFolders(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const folders: string[] = [];
  for (const match of text.matchAll(/from '(\.{1,2}\/[^']*)'/g)) {
    const target = relative(SRC, resolve(dirname(file), match[1]));
    folders.push(target.split('/')[0]);
  }
  return folders;
}

describe('module layering', () => {
  it.each(STACK.map((folder, level) => [folder, level] as const))('%s imports nothing above it', (folder, level) => {
    const above = new Set(STACK.slice(level + 1));
    const upward: string[] = [];
    for (const file of tsFiles(join(SRC, folder))) {
      for (const target of importedFolders(file)) {
        if (above.has(target)) upward.push(`${relative(SRC, file)} → ${target}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('targets imports no feature at all', () => {
    const imports = tsFiles(join(SRC, 'targets')).flatMap(importedFolders);
    expect(imports.filter((f) => f !== 'targets')).toEqual([]);
  });
});
