import { BodyEncoding, escapeStyleFor } from '../../src/modules/vault/placeholders/placeholder-encodings';
import {
  fillBytes,
  filledValue,
  filledValues,
  fillScan,
  PlaceholderSourceShape,
  scanText,
  TemplateSecrets,
} from '../../src/modules/vault/placeholders/placeholders';

/**
 * Placeholder fills as the forward executor makes them, out of the functions it calls: the template is scanned
 * (and refused) first, then filled. The executor itself needs cards, a plan and a target; these need only values.
 */

/** A source that offers every name at positions 1 to 100, so that only the grammar limits what a test fills. */
const EVERY_NAME: PlaceholderSourceShape = {
  positions: 100,
  securityCode: true,
  networkTokens: true,
  threeDSecure: true,
  listedBy: 'the test',
  securityCodeFrom: 'the test',
};

interface FillOptions {
  source?: number | PlaceholderSourceShape;
  secrets?: TemplateSecrets;
}

/** `template` filled as a header value: each value put in as it is (sendableHeader judges the result). */
export function fillHeaderValue(
  template: string,
  values: ReadonlyMap<string, string>,
  { source = EVERY_NAME, secrets }: FillOptions = {},
): string {
  const scan = scanText(template, source);
  return fillScan(scan, (m) => filledValue(m, values, 'none', secrets));
}

/** `template` filled as a body of `encoding`: UTF-8 bytes, each value escaped for the body's content type. */
export function fillBody(
  template: string,
  values: ReadonlyMap<string, string>,
  encoding: BodyEncoding = 'none',
  { source = EVERY_NAME, secrets }: FillOptions = {},
): string {
  const body = Buffer.from(template, 'utf8');
  const scan = scanText(body.toString('latin1'), source, escapeStyleFor(encoding));
  return fillBytes(body, scan, filledValues(scan, values, encoding, secrets).encoded).toString('utf8');
}
