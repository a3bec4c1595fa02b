import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { gr4vyErrorBody, prefersGr4vyError } from '../../src/platform/problem/gr4vy-error';
import { longAccept } from '../support/hostile-inputs';

describe('prefersGr4vyError (issue 22: which clients get Gr4vy’s error body)', () => {
  it.each([
    [undefined, false],
    ['', false],
    ['*/*', false],
    ['application/*', false],
    ['application/problem+json', false],
    ['application/json, application/problem+json', false],
    ['application/json, text/plain, */*', false], // axios's default: problem+json through */*
    ['application/json;q=0.5, application/problem+json', false],
    ['application/json;q=0.5, */*;q=0.6', false],
    ['application/json;q=oops', false], // a malformed weight drops the range
    ['application/json', true],
    [' Application/JSON ; charset=utf-8', true],
    ['application/json, */*;q=0.8', true],
    ['application/problem+json;q=0.1, application/json', true],
    ['application/problem+json;q=0, application/*', true],
    [['text/html', 'application/json'], true],
  ])('Accept %j → %s', (accept, expected) => {
    expect(prefersGr4vyError(accept)).toBe(expected);
  });

  // Its CPU, a quarter against the whole, is measured by `npm run bench:linear`.
  it('reads a long header to the end', () => {
    expect(prefersGr4vyError(longAccept(10_000))).toBe(true);
  });
});

describe('gr4vyErrorBody', () => {
  it('gives Gr4vy’s code for the status, keeps ours in each detail, and points at body fields with JSON pointers', () => {
    expect(
      gr4vyErrorBody({
        type: '/errors/validation-failed',
        title: 'Invalid request',
        status: 400,
        detail: 'Three fields are wrong.',
        code: 'validation-failed',
        instance: '/buyers',
        request_id: 'r-1',
        errors: [
          { location: 'body', name: 'hosts.0', message: 'is not a host' },
          { location: 'body', name: 'a/b~c', message: 'is unknown' },
          { location: 'body', name: 'body', message: 'must be an object' },
          { location: 'header', name: 'x-vault-forward-url', message: 'is required' },
          { location: 'query', name: 'limit', message: 'must be 1 to 100' },
        ],
      }),
    ).toEqual({
      type: 'error',
      code: 'bad_request',
      status: 400,
      message: 'Three fields are wrong.',
      details: [
        { location: 'body', type: 'validation-failed', pointer: '/hosts/0', message: 'is not a host' },
        { location: 'body', type: 'validation-failed', pointer: '/a~1b~0c', message: 'is unknown' },
        { location: 'body', type: 'validation-failed', pointer: '', message: 'must be an object' },
        { location: 'header', type: 'validation-failed', pointer: 'x-vault-forward-url', message: 'is required' },
        { location: 'query', type: 'validation-failed', pointer: 'limit', message: 'must be 1 to 100' },
      ],
    });
  });

  it.each([
    [400, 'bad_request'],
    [401, 'unauthorized'],
    [403, 'forbidden'],
    [404, 'not_found'],
    [405, 'method_not_allowed'],
    [409, 'duplicate_record'],
    [425, 'too_early'],
    [429, 'too_many_requests'],
    [500, 'server_error'],
    [502, 'bad_gateway'],
    [504, 'gateway_timeout'],
    [413, 'our-code'],
    [415, 'our-code'],
    [422, 'our-code'],
    [503, 'our-code'],
  ])('status %i: code %s (Gr4vy’s where its SDK has an error model for the status, ours elsewhere)', (status, code) => {
    expect(gr4vyErrorBody({ type: '/errors/our-code', title: 'X', status, detail: 'X.', code: 'our-code' }).code).toBe(
      code,
    );
  });

  it('uses the codes @gr4vy/sdk’s error models default to', () => {
    // The SDK's own models, read from the package: each `ErrorNNN` defaults `code` to Gr4vy's code for NNN.
    const dir = join(dirname(require.resolve('@gr4vy/sdk/package.json')), 'models', 'errors');
    const models = readdirSync(dir).filter((name) => /^error\d{3}\.js$/.test(name));
    expect(models.length).toBeGreaterThanOrEqual(10);
    for (const name of models) {
      const status = Number(name.slice(5, 8));
      const sdkCode = /code: z\.string\(\)\.default\("([a-z_]+)"\)/.exec(readFileSync(join(dir, name), 'utf8'))?.[1];
      const ours = gr4vyErrorBody({ type: '/errors/x', title: 'X', status, detail: 'X.', code: 'x' }).code;
      expect({ status, code: ours }).toEqual({ status, code: sdkCode });
    }
  });

  it('always has details, empty when the problem names no field', () => {
    expect(
      gr4vyErrorBody({ type: '/errors/x', title: 'X', status: 404, detail: 'Not here.', code: 'x' }).details,
    ).toEqual([]);
  });
});
