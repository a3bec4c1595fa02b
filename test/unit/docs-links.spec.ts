import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative, resolve } from 'node:path';

/**
 * Every relative link in README.md and docs/ resolves: the file exists and, when the link names an anchor, the
 * target has that heading or `<a id>`. The decisions live one per file and other documents link into them, so a
 * renamed file or heading would otherwise leave links that only a reader finds broken.
 */
const ROOT = resolve(__dirname, '../..');

/** Markdown files by their path from the repository root, with '/' separators. */
type Docs = Map<string, string>;

function markdownUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownUnder(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

function repositoryDocs(): Docs {
  const files = [join(ROOT, 'README.md'), ...markdownUnder(join(ROOT, 'docs'))];
  return new Map(files.map((file) => [relative(ROOT, file).split('\\').join('/'), readFileSync(file, 'utf8')]));
}

/** Code blocks and code spans are examples, not links. */
function withoutCode(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2, … */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const text = heading[1].replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
      const slug = text
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\p{M}_\- ]/gu, '')
        .replace(/ /g, '-');
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const id of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id[1]);
  }
  return anchors;
}

/** Each broken relative link as `file: target (reason)`. `exists` answers for paths that are not Markdown files. */
export function brokenLinks(docs: Docs, exists: (path: string) => boolean): string[] {
  const broken: string[] = [];
  for (const [file, text] of docs) {
    for (const match of withoutCode(text).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = match[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: and the like
      const [rawPath, anchor] = target.split('#', 2) as [string, string | undefined];
      const path =
        rawPath === '' ? file : posix.normalize(posix.join(posix.dirname(file), decodeURI(rawPath))).replace(/\/$/, '');
      const markdown = docs.get(path);
      if (markdown === undefined && !exists(path)) {
        broken.push(`${file}: ${target} (no such file)`);
      } else if (anchor !== undefined) {
        if (markdown === undefined) broken.push(`${file}: ${target} (an anchor into a file that is not Markdown)`);
        else if (!anchorsOf(markdown).has(decodeURIComponent(anchor)))
          broken.push(`${file}: ${target} (no such anchor)`);
      }
    }
  }
  return broken;
}

describe('relative links in README.md and docs/', () => {
  it('all resolve, anchors included', () => {
    const docs = repositoryDocs();
    expect(docs.size).toBeGreaterThan(50); // docs/decisions/ included
    expect(brokenLinks(docs, (path) => existsSync(join(ROOT, path)))).toEqual([]);
  });

  describe('the check itself, on made-up documents', () => {
    const docs: Docs = new Map([
      [
        'docs/a.md',
        [
          '# Title',
          '## A `code` heading, with punctuation (issue 1)',
          '## Repeated',
          '## Repeated',
          '| <a id="old-anchor"></a>Old | row |',
          '[ok](b.md) [ok](#title) [ok](#a-code-heading-with-punctuation-issue-1) [ok](#repeated-1)',
          '[ok](b.md#b-heading) [ok](../README.md) [ok](sub/) [ok](https://example.com/x#y) [ok](#old-anchor)',
          '[missing file](c.md) [missing anchor](b.md#nope) [missing local](#repeated-2)',
          '`[in code](nowhere.md)`',
          '```',
          '[in a block](nowhere.md)',
          '```',
        ].join('\n'),
      ],
      ['docs/b.md', '# B heading\n[up](../src/x.ts#L1)'],
      ['README.md', '[ok](docs/a.md#old-anchor)'],
    ]);
    const exists = (path: string) => path === 'docs/sub' || path === 'src/x.ts';

    it('finds exactly the broken ones', () => {
      expect(brokenLinks(docs, exists)).toEqual([
        'docs/a.md: c.md (no such file)',
        'docs/a.md: b.md#nope (no such anchor)',
        'docs/a.md: #repeated-2 (no such anchor)',
        'docs/b.md: ../src/x.ts#L1 (an anchor into a file that is not Markdown)',
      ]);
    });
  });
});
