import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { kindsMarkdown } from '../../src/modules/forwarding-setup/authentication-kinds/kinds-markdown';
import { AUTHENTICATION_KINDS, KINDS } from '../../src/modules/forwarding-setup/authentication-kinds/kinds';
import { fieldErrors, secretWarnings } from '../../src/modules/forwarding-setup/authentication-kinds/method-fields';

describe('authentication method kinds', () => {
  it('docs/authentication-methods.md shows exactly the fields the service validates', () => {
    const doc = readFileSync(resolve(__dirname, '../../docs/authentication-methods.md'), 'utf8');
    const section = doc
      .slice(doc.indexOf('<!-- kinds:start -->') + '<!-- kinds:start -->'.length, doc.indexOf('<!-- kinds:end -->'))
      .trim();
    expect(section).toBe(kindsMarkdown());
  });

  it.each(AUTHENTICATION_KINDS)('the example of %s is valid for its own description', (kind) => {
    const example = KINDS[kind].example;
    // PEM placeholders ("…") are not keys, which earns warnings, never a refusal.
    expect(fieldErrors(kind, example)).toEqual([]);
    expect(Object.keys(example).every((name) => KINDS[kind].fields.some((f) => f.name === name))).toBe(true);
  });

  it.each([
    ['{timestamp}.{body}', []],
    ['{method}\n{path}\n{timestamp}\n{body_sha256}', []],
    ['no variables at all', []],
    ['{body', ['fields.template']],
    ['{Body}', ['fields.template']],
    ['{}', ['fields.template']],
  ])('template %j', (template, names) => {
    const errors = fieldErrors('hmac-signature', {
      secret: 's',
      algorithm: 'sha256',
      encoding: 'hex',
      header: 'x-sig',
      template,
    });
    expect(errors.map((e) => e.name)).toEqual(names);
  });

  it('warns about whitespace at either end of a secret and stores it as entered', () => {
    const fields = { secret: ' s\n', algorithm: 'sha256', encoding: 'hex', header: 'x' };
    expect(secretWarnings('hmac-signature', fields).map((w) => w.code)).toEqual([
      'secret-trailing-whitespace',
      'secret-leading-whitespace',
    ]);
    expect(secretWarnings('hmac-signature', { ...fields, secret: 's' })).toEqual([]);
    expect(fields.secret).toBe(' s\n');
  });

  it('never quotes a value in a field error', () => {
    const errors = fieldErrors('hmac-signature', {
      secret: 'TOPSECRET',
      algorithm: 'TOPSECRET',
      encoding: 'TOPSECRET',
      header: 'TOP SECRET',
      prefix: 'TOPSECRET\n',
    });
    expect(errors.map((e) => e.name).sort()).toEqual([
      'fields.algorithm',
      'fields.encoding',
      'fields.header',
      'fields.prefix',
    ]);
    expect(JSON.stringify(errors)).not.toContain('SECRET');
  });
});
