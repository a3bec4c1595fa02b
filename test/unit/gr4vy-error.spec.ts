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
