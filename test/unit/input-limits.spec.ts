import { jsonDeeperThan } from '../../src/app/api-app';
import { FORWARD_ROUTE, isForwardPath } from '../../src/modules/forwarding/entry/forward-route';

describe('jsonDeeperThan: the linear pre-scan ahead of JSON.parse', () => {
  it.each([
    ['[]', 1, false],
    ['[[]]', 1, true],
    ['{"a":{"b":1}}', 2, false],
    ['{"a":{"b":{}}}', 2, true],
    ['[{}, {}, [], [[]]]', 3, false],
    ['[{}, {}, [], [[]]]', 2, true],
    ['"[[[[[["', 1, false],
    ['["\\\\", [[]]]', 2, true], // an escaped backslash ends before the quote, which closes the string
    ['["\\"[[[[", []]', 2, false], // an escaped quote does not close it
    ['[1]]]]][[[', 2, false], // malformed: not counted here, JSON.parse refuses it
    ['', 0, false],
  ])('%s deeper than %i → %s', (text, max, expected) => {
    expect(jsonDeeperThan(text, max)).toBe(expected);
  });

  it('counts 5,000 levels in one pass', () => {
    expect(jsonDeeperThan('['.repeat(5000) + ']'.repeat(5000), 64)).toBe(true);
    expect(jsonDeeperThan('['.repeat(64) + ']'.repeat(64), 64)).toBe(false);
  });
});

describe('isForwardPath: the spellings fastify routes to POST /vault-forward', () => {
  it.each([
    FORWARD_ROUTE,
    `${FORWARD_ROUTE}?a=1`,
    `${FORWARD_ROUTE}#x`,
    '/vault%2Dforward',
    '/vault%2dforward?x',
    '/%76%61ult-forward',
    '/vault-forwar%64#',
  ])('%s is the route', (url) => {
    expect(isForwardPath(url)).toBe(true);
  });

  it.each([
    '/vault-forward/',
    '//vault-forward',
    '/Vault-Forward',
    '/vault-forward/requests',
    '/vault-forwardx',
    '/vault-forward;x',
    '/vault-forward%3F',
    '/vault-forward%00',
    '%2Fvault-forward',
    '/vault-forward%',
    '/vault%zzforward',
    '/vault' + '%2D'.repeat(20) + 'forward',
    'http://host/vault-forward',
  ])('%s is not', (url) => {
    expect(isForwardPath(url)).toBe(false);
  });
});
