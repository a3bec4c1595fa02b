import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

/**
 * Issue 21: no file in src/ over ~450 lines unless it says why at its top (a comment line starting
 * "Long file:" in its first 20 lines), and no folder directly under src/ over ~2,000 lines: past those,
 * a file or a folder holds more than one thing and should be split before it grows further.
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

  it(`no folder under src/ holds over ${MAX_FOLDER_LINES} lines`, () => {
    const large = readdirSync(SRC)
      .map((name) => join(SRC, name))
      .filter((path) => statSync(path).isDirectory())
      .map((path) => ({
        folder: relative(SRC, path),
        lines: sources(path).reduce((sum, file) => sum + lines(file), 0),
      }))
      .filter((folder) => folder.lines > MAX_FOLDER_LINES);
    expect(large).toEqual([]);
  });
});
