import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SecureFieldsBundle } from '../../src/modules/payments/secure-fields/secure-fields-bundle';

describe('SecureFieldsBundle (decision 0140)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vf-secure-fields-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is unavailable without a built bundle, and serves nothing', async () => {
    const missing = new SecureFieldsBundle([join(dir, 'none')]);
    expect(missing.available()).toBe(false);
    expect(await missing.page('/controller.html', 'https://shop.example')).toBeNull();
    expect(await missing.asset('controller-abc.js')).toBeNull();
  });

  it('serves the pages with the parent origin as the only ancestor, and plain asset names only', async () => {
    const root = join(dir, 'built');
    mkdirSync(join(root, 'assets'), { recursive: true });
    writeFileSync(join(root, 'controller.html'), '<!doctype html><script src="/assets/c-1.js"></script>');
    writeFileSync(join(root, 'assets', 'c-1.js'), 'void 0;');
    writeFileSync(join(root, 'secret.txt'), 'not an asset');
    const bundle = new SecureFieldsBundle([join(dir, 'none'), root]);
    expect(bundle.available()).toBe(true);
    const page = await bundle.page('/controller.html', 'https://shop.example');
    expect(page?.headers['content-security-policy']).toBe(
      "default-src 'self'; script-src 'self'; style-src 'self'; font-src 'self' https://fonts.gstatic.com; " +
        "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors https://shop.example",
    );
    expect(await bundle.page('/input.html', 'https://shop.example')).toBeNull();
    expect((await bundle.asset('c-1.js'))?.headers['content-type']).toBe('text/javascript; charset=utf-8');
    for (const name of ['../secret.txt', '..%2fsecret.txt', '.hidden', '', 'a/b.js'])
      expect(await bundle.asset(name)).toBeNull();
    const refused = bundle.refused();
    expect(refused.status).toBe(403);
    expect(refused.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(refused.body.toString()).not.toMatch(/<input|<script/);
  });
});
