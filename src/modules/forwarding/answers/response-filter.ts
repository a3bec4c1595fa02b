/**
 * A downstream's answer put through its config's response rules and unmatched_pan
 * (decisions/0097, 0098, 0099), on the synchronous and the queued path alike: ForwardExecutor calls it
 * before the answer is returned or sealed.
 *
 *   filter(merchantAccountId, config, response): Promise<DownstreamResponse>
 *     The answer unchanged (streamed too) when no rule applies to it (none, or JSON rules and an
 *     answer of another type, with unmatched numbers passed); else read whole (at most
 *     RULES_MAX_BYTES), decoded if compressed (decision 0137: it then goes on decoded, without
 *     content-encoding), the rules applied, unmatched numbers masked or refused. Throws a
 *     ProblemException (502 ForwardResponseErrors, or 503) when it cannot return the answer.
 */
import { Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import { holdsCardNumber, maskCardNumbers } from '../../../platform/card-data/card-numbers';
import { readText, withCharset } from '../../../platform/card-data/text-encodings';
import { contentCodings, decodeContent } from '../../../platform/http/content-encoding';
import { CommonErrors } from '../../../platform/problem/common.errors';
import { ProblemDefinition, ProblemException, ProblemFieldError } from '../../../platform/problem/problem';
import { isDatabaseUnavailable } from '../../../platform/problem/database-errors';
import { DownstreamProblem, type DownstreamResponse } from '../sending/downstream-client';
import { PaymentMethodsService } from '../../payments/payment-methods/payment-methods.service';
import type { CompiledRule, UnmatchedPanAction } from '../../forwarding-setup/configs/response-rules';
import { ForwardResponseErrors } from './forward-responses.errors';
import { applyRules, FoundCard, RuleFailure } from './response-rules-engine';
import { parseJsonExactly } from './json-text';

/**
 * What the rules read whole; larger answers of a config with rules are refused (decisions/0099). A
 * compressed answer is read whole up to this, and decoded up to this (decision 0137).
 */
export const RULES_MAX_BYTES = 1024 * 1024;

export interface ResponsePolicy {
  responseRules: CompiledRule[];
  unmatchedPan: UnmatchedPanAction;
}

@Injectable()
export class ResponseFilter {
  constructor(private readonly paymentMethods: PaymentMethodsService) {}

  async filter(
    merchantAccountId: string,
    policy: ResponsePolicy,
    response: DownstreamResponse,
  ): Promise<DownstreamResponse> {
    const isJson = isJsonAnswer(response);
    // No rule applies to this answer: it goes as it came, streamed or whole (decisions/0099).
    if (policy.unmatchedPan === 'pass' && (policy.responseRules.length === 0 || !isJson)) return response;
    const body = response.body instanceof Readable ? await readCapped(response.body) : response.body;
    if (body.length === 0) return { ...response, body };
    // A compressed answer is read decoded, and goes on decoded (decision 0137).
    const plain = isCompressed(response) ? await decoded(response, body) : { ...response, body };
    const out = isJson ? await this.filterJson(merchantAccountId, policy, plain.body) : plain.body;
    const checked = this.unmatched(policy.unmatchedPan, out, isJson, responseHeader(response, 'content-type'));
    if (checked.bytes === plain.body) return plain;
    // The length changed; the transport computes it again.
    const headers = { ...plain.headers };
    delete headers['content-length'];
    // A legacy charset masked is written as UTF-8 (card-numbers.ts readText).
    if (checked.charset !== undefined)
      headers['content-type'] = withCharset(responseHeader(response, 'content-type'), checked.charset);
    return { ...response, headers, body: checked.bytes };
  }

  /** The rules applied; the same bytes when no rule matched (a re-serialisation could alter numbers). */
  private async filterJson(merchantAccountId: string, policy: ResponsePolicy, body: Buffer): Promise<Buffer> {
    if (policy.responseRules.length === 0) return body;
    let root: { value: unknown };
    try {
      root = { value: parseJsonExactly(body.toString('utf8')) };
    } catch {
      throw notProcessable('it says it is JSON but does not parse');
    }
    let found: { cards: FoundCard[]; changed: boolean };
    try {
      found = applyRules(root.value, policy.responseRules);
    } catch (error) {
      if (error instanceof RuleFailure) throw cardUnusable(error.rule, error.field, error.message);
      throw error;
    }
    if (!found.changed) return body;
    await this.tokenize(merchantAccountId, found.cards);
    return serialise(root.value);
  }

  /** Each card once, in order, even when the answer repeats it. */
  private async tokenize(merchantAccountId: string, cards: FoundCard[]): Promise<void> {
    const ids = new Map<string, string>();
    for (const card of cards) {
      let id = ids.get(card.number);
      if (id === undefined) {
        const stored = await this.paymentMethods.storeAnswered(merchantAccountId, card).catch((error: unknown) => {
          // The target has answered: a queued job must not take this for a request that never left.
          if (!isDatabaseUnavailable(error)) throw error;
          throw refused(
            CommonErrors.serviceUnavailable,
            'The card in the downstream’s answer could not be stored: the database is unavailable. The answer was not returned.',
            [{ location: 'body', name: `response_rules[${card.rule}]`, message: 'the card could not be stored now' }],
          );
        });
        if (stored === null) {
          throw cardUnusable(card.rule, 'expiration_date', 'the card is new and the answer gives no expiry');
        }
        id = stored;
        ids.set(card.number, id);
      }
      card.put(id);
    }
  }

  /**
   * Card numbers no rule covered, found in any spelling (card-data/), in the answer's own text
   * encoding (UTF-16 too): refused, or masked in place — a JSON number that is one becomes its masked
   * string, written from its digits as they came, never rounded.
   */
  private unmatched(
    action: UnmatchedPanAction,
    body: Buffer,
    isJson: boolean,
    contentType?: string,
  ): { bytes: Buffer; charset?: string } {
    if (action === 'pass') return { bytes: body };
    const read = readText(body, contentType);
    const text = read.text;
    if (!holdsCardNumber(text)) return { bytes: body };
    if (action === 'refuse') {
      throw refused(
        ForwardResponseErrors.unmatchedCardNumber,
        'The downstream’s answer holds a card number that no response rule covers; the config refuses such answers.',
        [{ location: 'body', name: 'unmatched_pan', message: 'a card number no rule covers' }],
      );
    }
    return read.encode(maskCardNumbers(text, { bareJson: isJson }));
  }
}

/** The answer's header `name`, repeated values joined. */
export function responseHeader(response: DownstreamResponse, name: string): string | undefined {
  const value = response.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** Whether the answer says it is JSON (application/json or a +json type). */
export function isJsonAnswer(response: DownstreamResponse): boolean {
  return /^application\/(?:[\w.+-]+\+)?json\b/i.test(responseHeader(response, 'content-type') ?? '');
}

/** Whether the answer is compressed (a content-encoding other than identity): its bytes are not its text. */
export function isCompressed(response: DownstreamResponse): boolean {
  return contentCodings(response.headers['content-encoding']).length > 0;
}

/**
 * The answer decoded within the caps (at most RULES_MAX_BYTES, platform/http/content-encoding.ts), without
 * content-encoding or content-length; one that does not decode is refused (502 response-not-processable).
 */
async function decoded(response: DownstreamResponse, body: Buffer): Promise<DownstreamResponse & { body: Buffer }> {
  const result = await decodeContent(body, response.headers['content-encoding'], {
    maxBytes: RULES_MAX_BYTES,
    noun: 'answer',
  });
  if (!result.ok) throw notProcessable(`it is compressed and does not decode within the caps (${result.why})`);
  const headers = { ...response.headers };
  delete headers['content-encoding'];
  delete headers['content-length'];
  return { ...response, headers, body: result.body };
}

function serialise(value: unknown): Buffer {
  try {
    return Buffer.from(JSON.stringify(value), 'utf8');
  } catch {
    // V8 writes JSON recursively: an answer nested thousands of levels deep overflows its stack.
    throw notProcessable('it is nested too deeply');
  }
}

/** The whole stream, or `tooLarge()` (502) once it passes RULES_MAX_BYTES (the rest is not waited for). */
export async function readCapped(stream: Readable, tooLarge = tooLargeForRules): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size > RULES_MAX_BYTES) {
      stream.destroy();
      throw tooLarge();
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, size);
}

function tooLargeForRules(): ProblemException {
  return refused(
    ForwardResponseErrors.responseTooLargeForRules,
    `The downstream’s answer is larger than the ${RULES_MAX_BYTES} bytes response rules are applied to; it was not returned.`,
    [{ location: 'body', name: 'response_rules', message: `answer over ${RULES_MAX_BYTES} bytes` }],
  );
}

function notProcessable(why: string): ProblemException {
  return refused(
    ForwardResponseErrors.responseNotProcessable,
    `The downstream’s answer cannot be put through the response rules: ${why}. It was not returned.`,
    [{ location: 'body', name: 'response_rules', message: why }],
  );
}

function cardUnusable(rule: number, field: string, why: string): ProblemException {
  return refused(
    ForwardResponseErrors.responseCardUnusable,
    `response_rules[${rule}] could not tokenize the answer’s card: ${why}. The answer was not returned.`,
    [{ location: 'body', name: `response_rules[${rule}].${field}`, message: why }],
  );
}

/** The downstream has answered (a retry would repeat the request), but the answer is withheld. */
function refused(definition: ProblemDefinition, detail: string, errors: ProblemFieldError[]): ProblemException {
  return new DownstreamProblem(definition, detail, true, errors);
}
