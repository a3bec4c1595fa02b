import { parseCryptograms } from '../../src/modules/forwarding/request/forward-headers';
import { isCryptogram } from '../../src/modules/payments/network-tokens/token-requestor';
import { PLACEHOLDER_NAMES, PlaceholderError, scanText } from '../../src/modules/vault/placeholders/placeholders';
import { ProblemException } from '../../src/platform/problem/problem';

/** CARD_CRYPTOGRAM_X and x-vault-forward-cryptograms (issue 23, item 2; decision 0100). */
describe('cryptogram placeholders', () => {
  const session = {
    positions: 1,
    securityCode: true,
    networkTokens: false,
    listedBy: 'x-vault-forward-checkout-session',
    securityCodeFrom: 'x-vault-forward-checkout-session',
  };

  it('are names, with an _OR_EMPTY_STRING twin, at any listed position', () => {
    expect(PLACEHOLDER_NAMES).toEqual(expect.arrayContaining(['CARD_CRYPTOGRAM', 'CARD_CRYPTOGRAM_OR_EMPTY_STRING']));
    const scan = scanText('{{ CARD_CRYPTOGRAM_2 }}{{CARD_CRYPTOGRAM_OR_EMPTY_STRING_1}}', 2, 'json');
    expect(scan.uses).toEqual([
      { token: 'CARD_CRYPTOGRAM_2', name: 'CARD_CRYPTOGRAM', position: 2 },
      { token: 'CARD_CRYPTOGRAM_OR_EMPTY_STRING_1', name: 'CARD_CRYPTOGRAM_OR_EMPTY_STRING', position: 1 },
    ]);
    expect(() => scanText('{{ CARD_CRYPTOGRAM_3 }}', 2)).toThrow(/refers to position 3/);
    expect(() => scanText('{{ CARD_CRYPTOGRAMS_1 }}', 2)).toThrow(/is not a placeholder name/);
  });

  it('a checkout session: the plain name is refused at the scan pointing at the twin, which is allowed', () => {
    let error: unknown;
    try {
      scanText('{{ CARD_CRYPTOGRAM_1 }}', session);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PlaceholderError);
    expect((error as PlaceholderError).reason).toBe('not-available');
    expect((error as Error).message).toContain('CARD_CRYPTOGRAM_OR_EMPTY_STRING_1');
    expect(scanText('{{ CARD_CRYPTOGRAM_OR_EMPTY_STRING_1 }}', session).uses).toHaveLength(1);
  });

  it('a cryptogram is 8–128 base64, base64url or hex characters with at most two = of padding', () => {
    for (const good of [
      'AgAAAAAABk4DWZ4C28yUQAAAAAA=',
      'a'.repeat(8),
      'a'.repeat(128),
      '0123456789abcdef',
      'ab-_+/AB==',
    ]) {
      expect(isCryptogram(good)).toBe(true);
    }
    for (const bad of [
      '',
      'a'.repeat(7),
      'a'.repeat(129),
      'abc def gh',
      'abcdefgh===',
      'abc=defgh',
      'abcdefgh\n',
      'é'.repeat(10),
    ]) {
      expect(isCryptogram(bad)).toBe(false);
    }
  });

  it('the header is read by position (empty: none), refused naming the position and never the value', () => {
    expect(parseCryptograms(' AAAAAAAAAA= , ,BBBBBBBBBB', 3)).toEqual(['AAAAAAAAAA=', null, 'BBBBBBBBBB']);
    expect(parseCryptograms('AAAAAAAAAA', 3)).toEqual(['AAAAAAAAAA']);
    const refusal = (raw: string, count: number) => {
      try {
        parseCryptograms(raw, count);
      } catch (error) {
        expect(error).toBeInstanceOf(ProblemException);
        const problem = error as ProblemException;
        return JSON.stringify({ detail: problem.detail, errors: problem.errors });
      }
      throw new Error('not refused');
    };
    const secret = 'SeCrEtCrYpToGrAm0123==';
    expect(refusal(`${secret},${secret} x`, 2)).toContain('position 2');
    expect(refusal(`${secret},${secret} x`, 2)).not.toContain(secret);
    expect(refusal(`${secret},${secret}`, 1)).toContain('lists 2 positions');
    expect(refusal(',', 2)).toContain('holds no cryptogram');
    expect(refusal(secret, 0)).toContain('x-vault-forward-payment-methods');
  });
});
