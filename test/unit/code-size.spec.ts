import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * No file in src/ over ~450 lines unless it says why at its top (a comment line starting "Long file:" in its
 * first 20 lines), and no folder whose own files (its sub-folders apart, a feature's dto/ counted with it) pass
 * ~2,000 lines: past those, a file or a folder holds more than one thing and should be split. The cap is on
 * what a folder holds itself, so a context grows by sub-folders, never by a cap drawing its top-level lines.
 */
const SRC = resolve(__dirname, '../../src');
const MAX_FILE_LINES = 450;
const MAX_FOLDER_LINES = 2_000;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

const lines = (path: string) => readFileSync(path, 'utf8').split('\n').length;

describe('code size', () => {
  it(`no file in src/ is over ${MAX_FILE_LINES} lines without a "Long file:" reason at its top`, () => {
    const unexplained = sources(SRC)
      .filter((path) => lines(path) > MAX_FILE_LINES)
      .filter(
        (path) =>
          !readFileSync(path, 'utf8')
            .split('\n')
            .slice(0, 20)
            .some((line) => /^\s*(\/\/|\*|\/\*\*?)\s*Long file:/.test(line)),
      )
      .map((path) => `${relative(SRC, path)}: ${lines(path)} lines`);
    expect(unexplained).toEqual([]);
  });

  it(`no folder in src/ holds over ${MAX_FOLDER_LINES} lines of its own`, () => {
    const byFolder = new Map<string, number>();
    for (const file of sources(SRC)) {
      const folder = relative(SRC, dirname(file)).replace(/(^|\/)dto$/, '');
      byFolder.set(folder, (byFolder.get(folder) ?? 0) + lines(file));
    }
    const large = [...byFolder]
      .filter(([, total]) => total > MAX_FOLDER_LINES)
      .map(([folder, total]) => `${folder}: ${total} lines`);
    expect(large).toEqual([]);
  });
});
