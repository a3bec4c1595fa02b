import type { OpenAPIObject } from '@nestjs/swagger';
import { openApiDocumentOffline } from '../../src/app/openapi-document';
import { StrictContract } from '../support/strict-contract';

/** Decision 0093: the document a strict OpenAPI 3.1 client can take at its word. */
describe('The OpenAPI 3.1 document', () => {
  let document: OpenAPIObject;
  let strict: StrictContract;
  const schemas = (): Record<string, any> => document.components!.schemas as Record<string, any>;
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
  beforeAll(async () => {
    document = await openApiDocumentOffline();
    strict = new StrictContract(document);
  });

  it('is 3.1 and says null the JSON Schema way: no `nullable` left', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(JSON.stringify(document)).not.toContain('"nullable"');
  });

  it.each([
    ['PaymentMethodResponse', 'buyer'],
    ['CheckoutSessionResponse', 'payment_method'],
    ['ForwardJobResponse', 'response'],
  ])('lets a strict validator accept null as %s.%s', (schema, property) => {
    const nullable = { type: 'object', properties: { [property]: schemas()[schema].properties[property] } };
    expect(strict.errors(`${schema}.${property}`, nullable, { [property]: null })).toEqual([]);
    // Still not anything at all: a string is neither the object nor null.
    expect(strict.errors(`${schema}.${property}`, nullable, { [property]: 'x' })).not.toEqual([]);
  });

  it('refuses unknown fields in every request body, at every depth', () => {
    const create = schemas().CreatePaymentMethodDto;
    expect(create.additionalProperties).toBe(false);
    expect(strict.errors('body', ref('CreateBuyerDto'), { display_name: 'A', surprise: 1 })).not.toEqual([]);
    expect(schemas().CheckoutSessionFieldsPaymentMethodDto.additionalProperties).toBe(false);
    // Answers stay open: a client must take new fields.
    expect(schemas().PaymentMethodResponse.additionalProperties).toBeUndefined();
  });

  it('types limit as an integer and the checkout session body as optional, as the server takes them', () => {
    const limit = document.paths['/buyers'].get!.parameters!.find((p) => 'name' in p && p.name === 'limit');
    expect(limit).toMatchObject({ schema: { type: 'integer' } });
    expect(document.paths['/checkout/sessions'].post!.requestBody).toMatchObject({ required: false });
  });

  it('declares the 200 replay of a queued forward and admits the downstream’s bodies at our error statuses', () => {
    const responses = document.paths['/vault-forward'].post!.responses as Record<string, any>;
    expect(responses['200']).toMatchObject({
      content: { 'application/json': { schema: ref('ForwardJobResponse') } },
      headers: { 'idempotent-replayed': expect.any(Object), 'preference-applied': expect.any(Object) },
    });
    for (const status of ['400', '401', '403', '413', '415', '422', '500', '502', '503', '504']) {
      const response = responses[status];
      expect({ status, header: response.headers['x-vault-forward-error'].required }).toEqual({
        status,
        header: undefined,
      });
      expect(response.content['*/*']).toBeDefined();
      const json = response.content['application/json'].schema;
      expect(strict.errors(`forward:${status}`, json, { downstream: ['any', 'body'] })).toEqual([]);
    }
  });
});
