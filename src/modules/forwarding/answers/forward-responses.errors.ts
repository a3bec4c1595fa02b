import { defineProblem } from '../../../platform/problem/problem';

/**
 * Problems of a downstream's answer under a config's response rules. The downstream has
 * answered, but its answer is withheld: each is a 502 of POST /vault-forward (ForwardingErrors spreads
 * them, so they carry x-vault-forward-error: true) and of a queued job's outcome. Their details name a
 * rule or a path, never a value of the answer.
 */
export const ForwardResponseErrors = {
  responseTooLargeForRules: defineProblem({
    code: 'response-too-large-for-rules',
    status: 502,
    title: 'Answer too large for the response rules',
    description:
      'The config has response rules (or unmatched_pan other than pass), and the downstream’s answer is larger ' +
      'than the 1 MiB they are applied to. It was not returned: it may hold card data the rules would have ' +
      'taken out. Answers of configs without rules stream through up to 10 MiB.',
  }),
  responseNotProcessable: defineProblem({
    code: 'response-not-processable',
    status: 502,
    title: 'Answer cannot be put through the response rules',
    description:
      'The downstream’s answer says it is JSON but does not parse, is nested too deeply, or is compressed ' +
      '(content-encoding) and does not decode within the caps: a coding other than gzip, deflate, br or zstd, ' +
      'corrupt bytes, or more than 1 MiB (or 100 times its compressed size past 64 KiB) decoded. The response ' +
      'rules read a compressed answer decoded, and return it decoded (decision 0137); this one was not returned.',
  }),
  responseCardUnusable: defineProblem({
    code: 'response-card-unusable',
    status: 502,
    title: 'A card in the answer cannot be tokenized',
    description:
      'A tokenize rule matched a value that is not a card number (12 to 19 digits passing the Luhn check), the ' +
      'expiry or cardholder name at its paths fails the checks of POST /payment-methods (MM/YY, MM/YYYY or ' +
      'YYYY-MM; 1 to 200 characters without control characters), or a card new to the merchant account came ' +
      'without an expiry. The answer was not returned; `errors` names the rule and field, never the value.',
  }),
  unmatchedCardNumber: defineProblem({
    code: 'unmatched-card-number',
    status: 502,
    title: 'Card number in the answer',
    description:
      'The downstream’s answer holds a Luhn-valid 13 to 19 digit number that no response rule covers, and the ' +
      'config’s unmatched_pan is refuse. The answer was not returned.',
  }),
  responseNotDecryptable: defineProblem({
    code: 'response-not-decryptable',
    status: 502,
    title: 'Encrypted answer cannot be decrypted',
    description:
      'A method of the forward holds a response_private_key and the downstream answered with a compact JWE ' +
      '(application/jose, or JSON {"encData": …}) that does not decrypt with it: encrypted to another key, altered, ' +
      'malformed, or with an alg/enc we do not accept. It was not returned; `errors` names the method. Answers ' +
      'that are no JWE pass untouched (decision 0103).',
  }),
  responseTooLargeToDecrypt: defineProblem({
    code: 'response-too-large-to-decrypt',
    status: 502,
    title: 'Answer too large to decrypt',
    description:
      'A method of the forward holds a response_private_key, and the downstream’s application/jose or JSON answer ' +
      'is larger than the 1 MiB read to look for and decrypt a JWE (the cap of the response rules). It was not ' +
      'returned.',
  }),
};
