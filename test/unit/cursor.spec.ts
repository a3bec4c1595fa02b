import { createHmac } from 'node:crypto';
import { CursorCodec, CursorScope } from '../../src/platform/pagination/cursor';
import { ProblemException } from '../../src/platform/problem/problem';

const secret = Buffer.from('unit-test-cursor-secret-0123456789abcdef');
const codec = new CursorCodec(secret);
const scope: CursorScope = {
  endpoint: 'buyers',
  merchantAccountId: 'm-1',
  filters: { search: 'ada', external_identifier: undefined },
};
const position = { createdAt: '2026-11-20T09:14:03.123456+00:00', id: '0b6f3c1e-4d0e-4c1e-9f3b-8f2f8f0a3c11' };

function refused(run: () => unknown): ProblemException {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ProblemException);
    const problem = error as ProblemException;
    expect(problem.definition.code).toBe('invalid-cursor');
    expect(problem.errors).toEqual([expect.objectContaining({ location: 'query', name: 'cursor' })]);
    return problem;
  }
  throw new Error('the cursor was accepted');
}

/** A cursor with a body of our choosing and a valid MAC (as if the secret had leaked), to reach the payload checks. */
function signed(payload: unknown, forScope: CursorScope = scope, raw?: string): string {
  const body = Buffer.from(raw ?? JSON.stringify(payload)).toString('base64url');
  const filters = JSON.stringify(
    Object.keys(forScope.filters)
      .filter((k) => forScope.filters[k] !== undefined && forScope.filters[k] !== null)
      .sort()
      .map((k) => [k, String(forScope.filters[k])]),
  );
  const mac = createHmac('sha256', secret)
    .update(`v1\n${forScope.endpoint}\n${forScope.merchantAccountId ?? '*'}\n${filters}\n${body}`)
    .digest()
    .subarray(0, 16)
    .toString('base64url');
  return `${body}.${mac}`;
}

describe('CursorCodec', () => {
  it('round-trips both directions', () => {
    expect(codec.decode(scope, codec.encode(scope, 'next', position))).toEqual({ direction: 'next', position });
    expect(codec.decode(scope, codec.encode(scope, 'previous', position))).toEqual({ direction: 'previous', position });
  });

  it('is opaque text: body.mac in base64url, a 16-byte MAC, the agreed layout', () => {
    const cursor = codec.encode(scope, 'next', position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(cursor).toBe(signed({ v: 1, d: 'n', t: position.createdAt, i: position.id }));
    expect(codec.encode(scope, 'previous', position)).toBe(
      signed({ v: 1, d: 'p', t: position.createdAt, i: position.id }),
    );
  });

  it('binds filters canonically: order and absent filters do not matter, values do', () => {
    const cursor = codec.encode(scope, 'next', position);
    expect(codec.decode({ ...scope, filters: { external_identifier: null, search: 'ada' } }, cursor).position).toEqual(
      position,
    );
    expect(codec.decode({ ...scope, filters: { search: 'ada' } }, cursor).position).toEqual(position);
    refused(() => codec.decode({ ...scope, filters: { search: 'ad' } }, cursor));
    refused(() => codec.decode({ ...scope, filters: {} }, cursor));
    refused(() => codec.decode({ ...scope, filters: { search: 'ada', external_identifier: 'x' } }, cursor));
    const two = { ...scope, filters: { a: '1', b: '2' } };
    expect(
      codec.decode({ ...scope, filters: { b: '2', a: '1' } }, codec.encode(two, 'next', position)).position,
    ).toEqual(position);
    refused(() => codec.decode({ ...scope, filters: { a: '2', b: '1' } }, codec.encode(two, 'next', position)));
  });

  it('is refused for another endpoint, merchant account, instance scope or secret', () => {
    const cursor = codec.encode(scope, 'next', position);
    const problem = refused(() => codec.decode({ ...scope, endpoint: 'payment-methods' }, cursor));
    expect(problem.detail).toMatch(/altered, or was issued for another endpoint/);
    refused(() => codec.decode({ ...scope, merchantAccountId: 'm-2' }, cursor));
    refused(() => codec.decode({ ...scope, merchantAccountId: null }, cursor));
    refused(() => new CursorCodec(Buffer.from('another-secret')).decode(scope, cursor));
  });

  it('refuses any single changed character, in the body or in the MAC', () => {
    const cursor = codec.encode(scope, 'next', position);
    for (let i = 0; i < cursor.length; i++) {
      if (cursor[i] === '.') continue;
      const changed = cursor.slice(0, i) + (cursor[i] === 'A' ? 'B' : 'A') + cursor.slice(i + 1);
      refused(() => codec.decode(scope, changed));
    }
  });

  it.each([
    ['empty', ''],
    ['no dot', 'abc'],
    ['three parts', 'a.b.c'],
    ['empty body', '.abc'],
    ['empty mac', 'abc.'],
    ['not base64url', 'ab+c.de/f'],
    ['padding', 'abc=.def'],
    ['far too long', `${'a'.repeat(600)}.b`],
  ])('refuses a malformed cursor (%s)', (_label, cursor) => {
    expect(refused(() => codec.decode(scope, cursor)).detail).toBe('The cursor is not one this service issued.');
  });

  it('refuses a long cursor before doing any work, but not one at the limit', () => {
    const atLimit = `${'a'.repeat(512 - 23)}.${'b'.repeat(22)}`;
    expect(atLimit).toHaveLength(512);
    expect(refused(() => codec.decode(scope, atLimit)).detail).toMatch(/altered/);
    expect(refused(() => codec.decode(scope, `a${atLimit}`)).detail).toBe('The cursor is not one this service issued.');
  });

  it('refuses a MAC of the wrong length even if it is a prefix of the right one', () => {
    const [body, mac] = codec.encode(scope, 'next', position).split('.');
    refused(() => codec.decode(scope, `${body}.${mac.slice(0, -1)}`));
    refused(() => codec.decode(scope, `${body}.${mac}A`));
  });

  it.each<[string, unknown, string?]>([
    ['not JSON', undefined, '{nope'],
    ['version 2', { v: 2, d: 'n', t: position.createdAt, i: position.id }, undefined],
    ['version as text', { v: '1', d: 'n', t: position.createdAt, i: position.id }, undefined],
    ['unknown direction', { v: 1, d: 'x', t: position.createdAt, i: position.id }, undefined],
    ['no direction', { v: 1, t: position.createdAt, i: position.id }, undefined],
    ['milliseconds only', { v: 1, d: 'n', t: '2026-11-20T09:14:03.123+00:00', i: position.id }, undefined],
    ['another zone', { v: 1, d: 'n', t: '2026-11-20T09:14:03.123456+01:00', i: position.id }, undefined],
    ['trailing text', { v: 1, d: 'n', t: `${position.createdAt}x`, i: position.id }, undefined],
    ['leading text', { v: 1, d: 'n', t: `x${position.createdAt}`, i: position.id }, undefined],
    ['id not a string', { v: 1, d: 'n', t: position.createdAt, i: 7 }, undefined],
    ['no id', { v: 1, d: 'n', t: position.createdAt }, undefined],
  ])('refuses a correctly signed cursor whose content is not ours (%s)', (_label, payload, raw) => {
    expect(refused(() => codec.decode(scope, signed(payload, scope, raw))).detail).toBe(
      'The cursor is not one this service issued.',
    );
  });

  it('accepts a correctly signed cursor in either direction (the checks above refuse only what they must)', () => {
    expect(codec.decode(scope, signed({ v: 1, d: 'p', t: position.createdAt, i: 'x' }))).toEqual({
      direction: 'previous',
      position: { createdAt: position.createdAt, id: 'x' },
    });
  });

  it('refuses characters outside base64url anywhere in either part, even under a valid MAC', () => {
    const good = signed({ v: 1, d: 'n', t: position.createdAt, i: position.id });
    const [body, mac] = good.split('.');
    // base64url decoding skips characters it does not know, so only the pattern's anchors stop these.
    for (const cursor of [`!${body}.${mac}`, `${body}!.${mac}`, `${body}.!${mac}`, `${body}.${mac}!`])
      refused(() => codec.decode(scope, cursor));
    // With the MAC computed over the junk too (a leaked secret), only the pattern refuses it.
    const macOver = (text: string) =>
      createHmac('sha256', secret)
        .update(`v1\n${scope.endpoint}\n${scope.merchantAccountId}\n[["search","ada"]]\n${text}`)
        .digest()
        .subarray(0, 16)
        .toString('base64url');
    expect(macOver(body)).toBe(mac); // the same MAC the service computes
    for (const junk of [`!${body}`, `${body}!`]) refused(() => codec.decode(scope, `${junk}.${macOver(junk)}`));
  });
});
