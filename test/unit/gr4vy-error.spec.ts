import { gr4vyErrorBody, prefersGr4vyError } from '../../src/platform/problem/gr4vy-error';
import { bestCpuMs } from '../support/cpu-time';

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

  it('reads a long header in one pass', () => {
    const long = `${'text/x-a;q=0.1, '.repeat(10_000)}application/json`;
    // The best of seven runs' CPU time: a loaded machine's stalls (one CI run saw 2.3 s of wall time) are
    // not this process's CPU, while a pass per range (quadratic) costs seconds of it on 160 KB.
    expect(prefersGr4vyError(long)).toBe(true);
    expect(bestCpuMs(() => prefersGr4vyError(long))).toBeLessThan(200);
  });
});

describe('gr4vyErrorBody', () => {
  it('keeps the code and the detail, and points at body fields with JSON pointers', () => {
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
      code: 'validation-failed',
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

  it('always has details, empty when the problem names no field', () => {
    expect(
      gr4vyErrorBody({ type: '/errors/x', title: 'X', status: 404, detail: 'Not here.', code: 'x' }).details,
    ).toEqual([]);
  });
});
