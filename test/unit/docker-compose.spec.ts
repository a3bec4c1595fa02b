import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { load } from 'js-yaml';

/**
 * docker-compose.yml and the Dockerfile, checked without a Docker daemon: `docker compose config`
 * when the docker CLI has the compose plugin, otherwise the YAML itself (js-yaml refuses duplicated
 * keys, as compose does), and the same structural facts either way.
 */
type Service = {
  build?: unknown;
  image?: string;
  pull_policy?: string;
  ports?: Array<string | { host_ip?: string; published?: string | number; target: number }>;
  volumes?: Array<string | { type: string; source?: string; target: string }>;
  container_name?: string;
  healthcheck?: { test: string[] };
  environment?: Record<string, unknown>;
  command?: string[];
  stop_grace_period?: string;
  init?: boolean;
  profiles?: string[];
  read_only?: boolean;
};

/** YAML merge keys (`<<: *anchor`), which compose resolves and js-yaml's default schema keeps as a key. */
function resolveMerges(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(resolveMerges);
  if (value === null || typeof value !== 'object') return value;
  const { '<<': merged, ...own } = value as Record<string, unknown>;
  const bases = merged === undefined ? [] : Array.isArray(merged) ? merged : [merged];
  return Object.assign(
    {},
    ...bases.map(resolveMerges),
    Object.fromEntries(Object.entries(own).map(([k, v]) => [k, resolveMerges(v)])),
  );
}

function composeConfig(): { services: Record<string, Service>; via: string } {
  const env = {
    ...process.env,
    VAULT_MASTER_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
    CURSOR_SECRET: 'x'.repeat(44),
    LEDGER_SIGNING_KEY: 'x'.repeat(44),
  };
  const version = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' });
  if (version.status === 0) {
    const args = ['compose', '--profile', 'walkthrough', 'config', '--format', 'json'];
    const result = spawnSync('docker', args, { encoding: 'utf8', env });
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
    return { services: JSON.parse(result.stdout).services, via: 'docker compose config' };
  }
  const parsed = resolveMerges(load(readFileSync('docker-compose.yml', 'utf8'))) as {
    services: Record<string, Service>;
  };
  return { services: parsed.services, via: 'js-yaml' };
}

describe('docker-compose.yml', () => {
  const { services } = composeConfig();

  it('parses, with every service the README names', () => {
    expect(Object.keys(services).sort()).toEqual(['api', 'postgres', 'redis', 'stand-in', 'worker']);
  });

  it('pins every image it pulls to an exact version, and runs the long-lived containers under an init process', () => {
    for (const [name, service] of Object.entries(services)) {
      if (service.image === 'vault-forward:local') continue;
      expect({ name, image: service.image }).toEqual({
        name,
        image: expect.stringMatching(/^[a-z0-9./-]+:\d+\.\d+(\.\d+)?(-[a-z0-9-]+)?$/),
      });
    }
    for (const name of ['api', 'worker', 'stand-in'])
      expect({ name, init: services[name].init }).toEqual({ name, init: true });
  });

  it("runs the README walkthrough's stand-in only when asked, unpublished, from examples/, and exempts no host by default", () => {
    const standIn = services['stand-in'];
    expect(standIn.profiles).toEqual(['walkthrough']);
    expect(standIn.ports).toBeUndefined();
    expect(standIn.read_only).toBe(true);
    // The same Node.js as the project's (package.json pins it), so the script runs where it was tested.
    const node = JSON.parse(readFileSync('package.json', 'utf8')).devDependencies.node as string;
    expect(standIn.image).toBe(`node:${node}-bookworm-slim`);
    const mounts = (standIn.volumes ?? []).map((v) => (typeof v === 'string' ? v : `${v.source}:${v.target}`));
    expect(mounts).toHaveLength(1);
    const [source, target] = mounts[0].split(':');
    expect(resolve(source)).toBe(resolve('examples/stand-in.js'));
    expect(readFileSync('examples/stand-in.js', 'utf8')).toContain("'--foreground'");
    expect(standIn.command).toEqual(['node', target, '--foreground']);
    expect(standIn.environment).toEqual({ STANDIN_ADDRESS: '0.0.0.0', STANDIN_PORT: '8089' });
    expect(standIn.healthcheck?.test.join(' ')).toContain('http://127.0.0.1:8089/');
    // The API forwards to it only when `FORWARD_INSECURE_HOSTS=stand-in:8089 docker compose up` says so.
    for (const name of ['api', 'worker'])
      expect(['', '${FORWARD_INSECURE_HOSTS:-}']).toContain(services[name].environment?.FORWARD_INSECURE_HOSTS);
  });

  it("is what README.md's Docker section runs: every secret compose requires, the stand-in's profile and host", () => {
    const readme = readFileSync('README.md', 'utf8');
    const docker = readme.slice(readme.indexOf('\n## Docker\n'));
    expect(docker.indexOf('\n## Docker\n')).toBe(0);
    const section = docker.slice(0, docker.indexOf('\n## ', 1));
    const required = [...readFileSync('docker-compose.yml', 'utf8').matchAll(/\$\{(\w+):\?/g)].map((m) => m[1]);
    expect(required.sort()).toEqual(['CURSOR_SECRET', 'LEDGER_SIGNING_KEY', 'VAULT_MASTER_KEYS']);
    for (const name of required) expect({ name, set: section.includes(`echo "${name}=`) }).toEqual({ name, set: true });
    expect(section).toContain('FORWARD_INSECURE_HOSTS=stand-in:8089 docker compose --profile walkthrough up');
    expect(section).toContain('STANDIN_HOST=stand-in:8089');
  });

  it('builds one image, once, for the api and the worker', () => {
    expect(services.api.build).toBeDefined();
    expect(services.worker.build).toBeUndefined();
    expect(services.worker.image).toBe(services.api.image);
    expect(services.worker.pull_policy).toBe('never');
    expect(services.worker.command).toEqual(['node', 'dist/worker.js']);
  });

  it("publishes the API's ports on the host's loopback only", () => {
    const ports = services.api.ports ?? [];
    expect(ports.length).toBeGreaterThan(0);
    for (const port of ports) {
      if (typeof port === 'string') expect(port).toMatch(/^127\.0\.0\.1:\d+(-\d+)?:\d+$/);
      else expect(port.host_ip).toBe('127.0.0.1');
    }
    expect(services.worker.ports).toBeUndefined();
  });

  it('scales (`docker compose up --scale api=3 --scale worker=4`): no fixed host port, no shared spool, no container name', () => {
    for (const name of ['api', 'worker']) expect(services[name].container_name).toBeUndefined();
    // Each published API port is a range of host ports with room for several replicas.
    for (const port of services.api.ports ?? []) {
      const published = typeof port === 'string' ? port.split(':').slice(-2)[0] : String(port.published);
      const [first, last] = published.split('-').map(Number);
      expect(last - first).toBeGreaterThanOrEqual(2);
    }
    // The spool directory is an anonymous volume (one per container), never a named one every replica would share.
    const spool = (services.api.volumes ?? []).filter((v) =>
      (typeof v === 'string' ? v : v.target).endsWith('/var/lib/vault-forward/spool'),
    );
    expect(spool).toHaveLength(1);
    const volume = spool[0];
    if (typeof volume === 'string') expect(volume).toBe('/var/lib/vault-forward/spool');
    else expect({ type: volume.type, source: volume.source ?? '' }).toEqual({ type: 'volume', source: '' });
    expect(services.api.environment?.FORWARD_RECORD_SPOOL_DIR).toBe('/var/lib/vault-forward/spool');
  });

  it('gives the worker a health check: the heartbeat file its environment names, read by a script in the image', () => {
    expect(services.worker.healthcheck?.test).toEqual(['CMD', 'node', 'dist/app/health/worker-healthcheck.js']);
    expect(existsSync('src/app/health/worker-healthcheck.ts')).toBe(true);
    expect(services.worker.environment?.WORKER_HEARTBEAT_FILE).toMatch(/^\/tmp\//);
    expect(services.api.healthcheck?.test.join(' ')).toContain('/health/ready');
  });

  it('keeps queued work across a Redis restart (append-only file in its volume)', () => {
    const command = services.redis.command ?? [];
    expect(command.join(' ')).toMatch(/--appendonly yes/);
    expect((services.redis.volumes ?? []).map((v) => (typeof v === 'string' ? v : `${v.source}:${v.target}`))).toEqual([
      'redis-data:/data',
    ]);
  });

  it('waits longer than the processes’ own 25 s grace before killing them', () => {
    expect(readFileSync('src/app/bootstrap/shutdown.ts', 'utf8')).toMatch(/GRACE_MS = 25_000/);
    for (const name of ['api', 'worker']) expect(services[name].stop_grace_period).toBe('30s');
  });

  it('passes the same vault and cursor settings to both, each key written once', () => {
    for (const name of ['api', 'worker']) {
      expect(Object.keys(services[name].environment ?? {})).toEqual(
        expect.arrayContaining(['VAULT_MASTER_KEYS', 'CURSOR_SECRET', 'DATABASE_URL', 'REDIS_URL']),
      );
    }
    const text = readFileSync('docker-compose.yml', 'utf8');
    expect(text.match(/^\s+VAULT_MASTER_KEYS:/gm)).toHaveLength(1);
    expect(() => load('a: 1\na: 2')).toThrow(/duplicated mapping key/); // what guards the file above
  });
});

describe('Dockerfile', () => {
  const dockerfile = readFileSync('Dockerfile', 'utf8');

  it('runs as node, with /app and its data directory writable by node (the CLI under compose writes there)', () => {
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/chown node:node \/app \/app\/data /);
  });

  it("builds and runs on the exact Node.js the project pins (package.json's `node`), not a floating tag", () => {
    const node = JSON.parse(readFileSync('package.json', 'utf8')).devDependencies.node as string;
    const bases = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(bases.length).toBeGreaterThan(0);
    for (const base of bases) expect(base).toBe(`node:${node}-bookworm-slim`);
  });

  it('copies what `npm run build` needs (scripts/build.js)', () => {
    expect(JSON.parse(readFileSync('package.json', 'utf8')).scripts.build).toContain('scripts/build.js');
    expect(dockerfile).toMatch(/^COPY scripts \.\/scripts$/m);
  });

  it('copies every input the build reads, so the image builds the server and the dashboard', () => {
    // scripts/build.js names its inputs per part; each directory or file among them must be in the image.
    const build = readFileSync('scripts/build.js', 'utf8');
    const inputs = [...build.matchAll(/inputs: \[([^\]]*)\]/g)].flatMap((m) =>
      [...m[1].matchAll(/'([^']+)'/g)].map((i) => i[1]),
    );
    expect(inputs).toEqual(expect.arrayContaining(['src', 'dashboard']));
    const copied = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1].split(/\s+/));
    for (const input of inputs) expect({ input, copied: copied.includes(input) }).toEqual({ input, copied: true });
  });
});
