import { readFileSync } from 'node:fs';
import { MERCHANT_ACCOUNT_ID_PATTERN } from '../modules/merchants/accounts/merchant-account-id';
import { parse, print, UsageError, withServices } from './cli-support';

export const INBOUND_ROUTE_USAGE = `  inbound-route create --merchant ID --json BODY|-
                                      a route as POST /vault-forward/inbound-routes takes it (- reads it from stdin, so
                                      a caller secret and upstream header values stay out of the shell's history);
                                      the answer never holds them
  inbound-route list --merchant ID    the merchant account's inbound routes, newest first
  inbound-route delete --merchant ID --id ID`;

/** `inbound-route create|list|delete` (docs/inbound-routes.md), through the service the API's routes use. */
export async function inboundRouteCommand(sub: string | undefined, args: string[]): Promise<void> {
  if (sub === 'create') return create(args);
  if (sub === 'list') return list(args);
  if (sub === 'delete') return remove(args);
  throw new UsageError(`unknown command "inbound-route ${sub ?? ''}"`);
}

function merchantOf(value: string | undefined): string {
  if (value === undefined || !MERCHANT_ACCOUNT_ID_PATTERN.test(value))
    throw new UsageError(`--merchant must match ${MERCHANT_ACCOUNT_ID_PATTERN.source}`);
  return value;
}

async function create(args: string[]): Promise<void> {
  const { values } = parse(args, { merchant: { type: 'string' }, json: { type: 'string' } });
  const merchant = merchantOf(values.merchant);
  if (values.json === undefined) throw new UsageError('inbound-route create needs --json BODY (or - for stdin)');
  let body: unknown;
  try {
    body = JSON.parse(values.json === '-' ? readFileSync(0, 'utf8') : values.json);
  } catch {
    throw new UsageError('--json must be a JSON object');
  }
  const [{ InboundRoutesService }, { CreateInboundRouteDto, InboundRouteResponse }, { ProblemValidationPipe }] =
    await Promise.all([
      import('../modules/inbound/routes/inbound-routes.service'),
      import('../modules/inbound/routes/dto/inbound-route.dto'),
      import('../platform/http/validation.pipe'),
    ]);
  // The checks of the API's body, field by field, before any service runs.
  const input = (await new ProblemValidationPipe().transform(body, {
    type: 'body',
    metatype: CreateInboundRouteDto,
  })) as InstanceType<typeof CreateInboundRouteDto>;
  const route = await withServices((app) => app.get(InboundRoutesService).create(merchant, input));
  print(InboundRouteResponse.from(route));
}

async function list(args: string[]): Promise<void> {
  const { values } = parse(args, { merchant: { type: 'string' } });
  const merchant = merchantOf(values.merchant);
  const [{ InboundRoutesService }, { InboundRouteResponse }, { keysetPage }] = await Promise.all([
    import('../modules/inbound/routes/inbound-routes.service'),
    import('../modules/inbound/routes/dto/inbound-route.dto'),
    import('../platform/pagination/keyset'),
  ]);
  const items = await withServices(async (app) => {
    const routes = app.get(InboundRoutesService);
    const all: Array<ReturnType<typeof InboundRouteResponse.from>> = [];
    // Every route, in pages of the API's largest, by keyset position: no cursors to sign in a local walk.
    let keyset: import('../platform/pagination/keyset').KeysetRequest = { limit: 100, cursor: null };
    for (;;) {
      const page = keysetPage(await routes.list(merchant, keyset), keyset);
      all.push(...page.rows.map((route) => InboundRouteResponse.from(route)));
      if (!page.next) return all;
      keyset = { limit: keyset.limit, cursor: { direction: 'next', position: page.next } };
    }
  });
  print({ items });
}

async function remove(args: string[]): Promise<void> {
  const { values } = parse(args, { merchant: { type: 'string' }, id: { type: 'string' } });
  const merchant = merchantOf(values.merchant);
  if (values.id === undefined) throw new UsageError('inbound-route delete needs --id ID');
  const { InboundRoutesService } = await import('../modules/inbound/routes/inbound-routes.service');
  await withServices((app) => app.get(InboundRoutesService).delete(merchant, values.id!));
  print({ id: values.id, deleted: true });
}
