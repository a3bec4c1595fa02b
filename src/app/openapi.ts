import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { openApiDocumentOffline } from './openapi-document';

/**
 * `npm run openapi [-- --out FILE]`: writes the OpenAPI document the API serves at /openapi.json,
 * built without a database or Redis (Nest's preview mode), to stdout or FILE.
 */
async function main(): Promise<void> {
  const at = process.argv.indexOf('--out');
  const out = at >= 0 ? process.argv[at + 1] : undefined;
  const text = `${JSON.stringify(await openApiDocumentOffline(), null, 2)}\n`;
  if (out && out !== '-') writeFileSync(out, text);
  else process.stdout.write(text);
}

main().catch((error: unknown) => {
  console.error(`openapi: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
