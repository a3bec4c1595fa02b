import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * docs/architecture.md is the map a newcomer reads first, so it must stay short and true: its folder map names
 * every folder of src/ (a feature's dto/ belongs to its feature) and no folder that is gone. A folder added or
 * moved without its line in the map fails here, not in a reader's head.
 */
const ROOT = resolve(__dirname, '../..');
const MAP = join(ROOT, 'docs/architecture.md');
const MAX_LINES = 250;
const MAP_HEADING = '## Folder map';

/** Every folder under `dir`, as `src/a/b/`, recursively, leaving out `dto/` folders. */
export function foldersUnder(dir: string, prefix: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name !== 'dto')
    .flatMap((entry) => {
      const path = `${prefix}${entry.name}/`;
      return [path, ...foldersUnder(join(dir, entry.name), path)];
    });
}

/** The folders the map's table names: the first cell of each row under the folder-map heading, in backticks. */
export function mappedFolders(markdown: string): string[] {
  const start = markdown.indexOf(`\n${MAP_HEADING}\n`);
  if (start < 0) throw new Error(`no "${MAP_HEADING}" section`);
  const rest = markdown.slice(start + MAP_HEADING.length + 2);
  const end = rest.search(/^## /m);
  const section = end < 0 ? rest : rest.slice(0, end);
  return [...section.matchAll(/^\|\s*`(src\/[^`]*)`\s*\|/gm)].map((match) => match[1]);
}

/** What the map misses and what it names that src/ does not have. */
export function mapDifferences(mapped: string[], actual: string[]): { unlisted: string[]; missing: string[] } {
  const listed = new Set(mapped);
  const present = new Set(actual);
  return {
    unlisted: actual.filter((folder) => !listed.has(folder)).sort(),
    missing: mapped.filter((folder) => !present.has(folder)).sort(),
  };
}

describe('docs/architecture.md', () => {
  const markdown = readFileSync(MAP, 'utf8');

  it(`is at most ${MAX_LINES} lines`, () => {
    expect(markdown.trimEnd().split('\n').length).toBeLessThanOrEqual(MAX_LINES);
  });

  it('maps every folder of src/, and only those', () => {
    const actual = foldersUnder(join(ROOT, 'src'), 'src/');
    expect(actual.length).toBeGreaterThan(40);
    expect(mapDifferences(mappedFolders(markdown), actual)).toEqual({ unlisted: [], missing: [] });
  });

  it('names each folder once', () => {
    const mapped = mappedFolders(markdown);
    expect(mapped.filter((folder, i) => mapped.indexOf(folder) !== i)).toEqual([]);
  });

  describe('the check itself, on a made-up map', () => {
    const made = [
      '# Architecture',
      '## Folder map',
      '| Folder | What it holds |',
      '|---|---|',
      '| `src/app/` | the root |',
      '| `src/gone/` | a folder that was removed |',
      '## Next',
      '| `src/elsewhere/` | not in the map section |',
    ].join('\n');

    it('reads only the map section', () => {
      expect(mappedFolders(made)).toEqual(['src/app/', 'src/gone/']);
    });

    it('reports a folder left out and a folder that is gone', () => {
      expect(mapDifferences(mappedFolders(made), ['src/app/', 'src/app/health/'])).toEqual({
        unlisted: ['src/app/health/'],
        missing: ['src/gone/'],
      });
    });

    it('refuses a document without the section', () => {
      expect(() => mappedFolders('# Architecture\n')).toThrow('Folder map');
    });
  });
});
