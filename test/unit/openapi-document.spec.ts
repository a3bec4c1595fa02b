import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OpenAPIObject } from '@nestjs/swagger';
import { openApiDocumentOffline } from '../../src/app/openapi-document';
import { problemDefinitions } from '../../src/platform/problem/problem';

const ROOT = join(__dirname, '..', '..');
const OPERATION_METHODS = ['get', 'put', 'post', 'delete', 'patch'];

describe('The OpenAPI document', () => {
  let document: OpenAPIObject;
  let dir: string;
  let file: string;
  beforeAll(async () => {
    document = await openApiDocumentOffline();
    dir = mkdtempSync(join(tmpdir(), 'openapi-'));
    file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(document));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('lints with zero errors under the recommended rules (redocly.yaml)', () => {
    let output: string;
    try {
      output = execFileSync(
        process.execPath,
        [
          join(ROOT, 'node_modules/@redocly/cli/bin/cli.js'),
          'lint',
          file,
          '--config',
          join(ROOT, 'redocly.yaml'),
          '--format',
          'json',
        ],
        {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
    } catch (error) {
      // Exit code 1 on errors: the report is still on stdout.
      output = (error as { stdout?: string }).stdout ?? '';
    }
    const report = JSON.parse(output.slice(output.indexOf('{'))) as {
      totals: { errors: number; warnings: number };
      problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }>;
    };
    const lines = report.problems.map(
      (p) => `${p.severity} ${p.ruleId}: ${p.message} (${p.location.map((l) => l.pointer).join(', ')})`,
    );
    if (report.totals.warnings > 0)
      console.warn(
        `OpenAPI lint: ${report.totals.warnings} warning(s)\n${lines.filter((l) => l.startsWith('warn')).join('\n')}`,
      );
    expect(lines.filter((l) => l.startsWith('error'))).toEqual([]);
    expect(report.totals.errors).toBe(0);
  });

  it('has no Spectral finding at all under spectral:oas (.spectral.yaml), warnings included', () => {
    let output: string;
    try {
      output = execFileSync(
        process.execPath,
        [
          join(ROOT, 'node_modules/@stoplight/spectral-cli/dist/index.js'),
          'lint',
          file,
          '--ruleset',
          join(ROOT, '.spectral.yaml'),
          '--format',
          'json',
          '--fail-severity',
          'hint',
        ],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
      );
    } catch (error) {
      // Exit code 1 on a finding: the report is still on stdout.
      output = (error as { stdout?: string }).stdout ?? '';
    }
    const findings = JSON.parse(output.slice(output.indexOf('['), output.lastIndexOf(']') + 1)) as Array<{
      code: string;
      message: string;
      path: string[];
    }>;
    expect(findings.map((f) => `${f.code}: ${f.message} (${f.path.join('.')})`)).toEqual([]);
  });

  it('is what the committed client types were generated from (else: npm run openapi:types)', () => {
    const generated = join(dir, 'openapi.ts');
    execFileSync(
      process.execPath,
      [join(ROOT, 'node_modules/openapi-typescript/bin/cli.js'), file, '--output', generated],
      { stdio: 'ignore' },
    );
    const committed = readFileSync(join(ROOT, 'test/generated/openapi.ts'), 'utf8');
    // toBe would print 5,000 lines; say which line differs first.
    const fresh = readFileSync(generated, 'utf8').split('\n');
    const stale = committed.split('\n').findIndex((line, i) => line !== fresh[i]);
    expect({ firstDifferentLine: stale, lines: committed.split('\n').length }).toEqual({
      firstDifferentLine: -1,
      lines: fresh.length,
    });
  });

  it('declares for every operation a success response with an exact schema, and its problems as problem+json', () => {
    const missing: string[] = [];
    for (const [path, item] of Object.entries<Record<string, any>>(document.paths)) {
      for (const method of OPERATION_METHODS) {
        const op = item[method];
        if (!op) continue;
        const key = `${method.toUpperCase()} ${path}`;
        const statuses = Object.keys(op.responses);
        const success = statuses.filter((s) => /^2\d\d$/.test(s));
        if (success.length === 0) missing.push(`${key}: no 2xx`);
        for (const status of success) {
          const response = op.responses[status];
          if (status === '204') {
            if (response.content) missing.push(`${key} 204 has content`);
          } else if (!response.content?.['application/json']?.schema)
            missing.push(`${key} ${status}: no application/json schema`);
        }
        for (const status of statuses.filter((s) => /^[45]\d\d$/.test(s))) {
          const declared = op.responses[status].content?.['application/problem+json']?.schema;
          // POST /vault-forward and the inbound entry: ours or the downstream's answer (anyOf), told apart by
          // x-vault-forward-error.
          const passesAnswers = key === 'POST /vault-forward' || key === 'POST /vault-inbound/{route_id}/{path}';
          const schema = passesAnswers ? declared?.anyOf?.[0] : declared;
          if (!schema?.allOf?.[1]?.properties?.code?.enum?.length)
            missing.push(`${key} ${status}: not a problem with its codes`);
        }
        if (!statuses.includes('500')) missing.push(`${key}: no 500`);
        if (!Array.isArray(op.security ?? document.security)) missing.push(`${key}: no security`);
      }
    }
    expect(missing).toEqual([]);
    // Creates answer 201, deletes 204 (jobs are cancelled, answering the job), health both ways.
    expect(Object.keys(document.paths['/buyers'].post!.responses)).toContain('201');
    expect(Object.keys(document.paths['/buyers/{id}'].delete!.responses)).toContain('204');
    expect(Object.keys(document.paths['/health/ready'].get!.responses)).toEqual(expect.arrayContaining(['200', '503']));
  });

  it('says where it is served, which version it describes, and which routes need no token', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(document.info.version).toBe(pkg.version);
    expect(document.servers).toEqual([{ url: '/', description: expect.any(String) }]);
    expect(document.security).toEqual([{ bearer: [] }]);
    const publicOps = Object.entries<Record<string, any>>(document.paths).flatMap(([path, item]) =>
      OPERATION_METHODS.filter((m) => item[m]?.security?.length === 0).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(publicOps.sort()).toEqual([
      'GET /',
      'GET /errors',
      'GET /errors/{code}',
      'GET /health/live',
      'GET /health/ready',
      'POST /vault-inbound/{route_id}/{path}',
    ]);
  });

  it('types every string field as a string: no bare `object` without properties', () => {
    const bare: string[] = [];
    const walk = (node: unknown, at: string): void => {
      if (!node || typeof node !== 'object') return;
      const schema = node as Record<string, unknown>;
      if (
        schema.type === 'object' &&
        !schema.properties &&
        schema.additionalProperties === undefined &&
        !schema.allOf &&
        !schema.oneOf
      )
        bare.push(at);
      for (const [key, value] of Object.entries(schema)) walk(value, `${at}/${key}`);
    };
    walk(document.components, '#/components');
    walk(document.paths, '#/paths');
    expect(bare).toEqual([]);
    const buyer = document.components!.schemas!.CreateBuyerDto as { properties: Record<string, unknown> };
    expect(buyer.properties.external_identifier).toMatchObject({ type: ['string', 'null'], maxLength: 200 });
  });

  it('documents POST /vault-forward without a route that only throws', () => {
    const forward = document.paths['/vault-forward'].post!;
    expect(forward.responses).toMatchObject({ '202': expect.any(Object), default: expect.any(Object) });
    // The route itself is ForwardHttpHandler's, in front of Nest: no controller method maps it.
    const source = readFileSync(join(ROOT, 'src/modules/forwarding/records/forward-records.controller.ts'), 'utf8');
    expect(source).not.toMatch(/@Post\(/);
    // Nor a published problem code that nothing answers with (authentication methods have landed).
    expect(problemDefinitions().map((p) => p.code)).not.toContain('not-implemented');
  });
});
