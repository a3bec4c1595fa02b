import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';

/** Origins the frames may load fonts from (the styles' allow-list names their families; decision 0140). */
const SECURE_FIELDS_FONT_ORIGINS = ['https://fonts.gstatic.com'] as const;

/** The two frame pages, at the root of SECURE_FIELDS_ORIGIN. */
export const FRAME_PAGES = ['/controller.html', '/input.html'] as const;

/**
 * A frame page's policy: nothing but the bundle's own files, no inline script or style, fonts from the allow-list,
 * calls to its own origin only, and embeddable by `parentOrigin` alone (an origin some merchant lists).
 */
function frameCsp(parentOrigin: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    `font-src 'self' ${SECURE_FIELDS_FONT_ORIGINS.join(' ')}`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${parentOrigin}`,
  ].join('; ');
}

/** Headers of every frame page answered (the 403 page's too, with its own policy). */
const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

/** A page that is not for the asking origin: no input, embeddable by nobody. */
const REFUSED_PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Not allowed</title></head>' +
  '<body><p>These card fields may not be shown on this page.</p></body></html>';

const REFUSED_CSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Hashed file names only: letters, digits, dots, dashes and underscores, not starting with a dot. */
const ASSET_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,200}$/;

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
};

export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * The frames' built files (`vite build` writes dist/secure-fields: controller.html, input.html, assets/), read from
 * disk at each request: a rebuild is served at once, and a missing bundle is a 503, never a crash.
 */
export class SecureFieldsBundle {
  /** `roots`: where the bundle may be, in order; the first that holds controller.html is served. */
  constructor(private readonly roots: readonly string[]) {}

  /** Next to the compiled server in dist/, or from the sources (ts-jest runs src/) in the project's dist/. */
  static located(): SecureFieldsBundle {
    return new SecureFieldsBundle([
      resolve(__dirname, '..', '..', '..', 'secure-fields'),
      resolve(__dirname, '..', '..', '..', '..', 'dist', 'secure-fields'),
    ]);
  }

  /** Whether the bundle is there to serve (false: every frame and asset request is a 503); one stat or two. */
  available(): boolean {
    return this.root() !== null;
  }

  private root(): string | null {
    return this.roots.find((dir) => existsSync(join(dir, 'controller.html'))) ?? null;
  }

  /** A frame page for a parent origin some merchant lists; null when the bundle has no such page. */
  async page(path: (typeof FRAME_PAGES)[number], parentOrigin: string): Promise<Answer | null> {
    const body = await this.read(path.slice(1));
    if (!body) return null;
    return { status: 200, headers: { ...PAGE_HEADERS, 'content-security-policy': frameCsp(parentOrigin) }, body };
  }

  /** The 403 page for a parent origin no merchant lists (or none, or not an origin). */
  refused(): Answer {
    return {
      status: 403,
      headers: { ...PAGE_HEADERS, 'content-security-policy': REFUSED_CSP },
      body: Buffer.from(REFUSED_PAGE, 'utf8'),
    };
  }

  /** A hashed asset, cached for a year (its name changes with its content); null when there is none. */
  async asset(name: string): Promise<Answer | null> {
    if (!ASSET_NAME.test(name)) return null;
    const body = await this.read(join('assets', name));
    if (!body) return null;
    return {
      status: 200,
      headers: {
        'content-type': CONTENT_TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream',
        'cache-control': 'public, max-age=31536000, immutable',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cross-origin-resource-policy': 'same-origin',
      },
      body,
    };
  }

  private async read(relative: string): Promise<Buffer | null> {
    const root = this.root();
    if (root === null) return null;
    try {
      return await readFile(join(root, relative));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR') return null;
      throw error;
    }
  }
}
