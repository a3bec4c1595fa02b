import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { loadConfig } from '../../src/platform/config/config';
import { TEST_LEDGER_KEY } from '../support/ledger-key';

/**
 * deploy/kubernetes (issue 25, docs/scaling.md, docs/decisions/0110), checked without a cluster: every
 * document parses, has a kind this project means to ship at its stable apiVersion, sets only settings
 * src/platform/config/ reads (and those it requires, enough for loadConfig to accept them), probes routes the
 * health controller serves, runs the Dockerfile's entry points, and its selectors select what they name.
 */
const DIR = 'deploy/kubernetes';
const API_VERSIONS: Record<string, string> = {
  ConfigMap: 'v1',
  Service: 'v1',
  StatefulSet: 'apps/v1',
  Deployment: 'apps/v1',
  Job: 'batch/v1',
  HorizontalPodAutoscaler: 'autoscaling/v2',
  PodDisruptionBudget: 'policy/v1',
  NetworkPolicy: 'networking.k8s.io/v1',
  Kustomization: 'kustomize.config.k8s.io/v1beta1',
};
const SECRET = 'vault-forward-secrets';

type Labels = Record<string, string>;
type EnvVar = { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } };
type Probe = { httpGet?: { path: string; port: string | number }; exec?: { command: string[] } };
type Container = {
  name: string;
  image: string;
  command?: string[];
  ports?: Array<{ name: string; containerPort: number }>;
  env?: EnvVar[];
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
  resources?: { requests?: { cpu?: string; memory?: string }; limits?: { memory?: string } };
  startupProbe?: Probe;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  volumeMounts?: Array<{ name: string; mountPath: string }>;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  securityContext?: { readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean };
};
type PodTemplate = {
  metadata: { labels: Labels };
  spec: {
    containers: Container[];
    volumes?: Array<{ name: string }>;
    securityContext?: { runAsUser?: number };
    terminationGracePeriodSeconds?: number;
  };
};
type Doc = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Labels };
  spec?: any;
  data?: Record<string, string>;
  resources?: string[];
};

const files = readdirSync(DIR).filter((name) => /\.ya?ml$/.test(name));
const docs: Array<Doc & { file: string }> = files.flatMap((file) =>
  (loadAll(readFileSync(join(DIR, file), 'utf8')) as Doc[]).filter(Boolean).map((doc) => ({ ...doc, file })),
);
const ofKind = (kind: string) => docs.filter((doc) => doc.kind === kind);
const workloads = docs.filter((doc) => ['StatefulSet', 'Deployment', 'Job'].includes(doc.kind));
const template = (doc: Doc): PodTemplate => doc.spec.template;
const containersOf = (doc: Doc) => template(doc).spec.containers;
const byComponent = (component: string) =>
  workloads.find((w) => template(w).metadata.labels['app.kubernetes.io/component'] === component)!;
const matches = (selector: Labels, labels: Labels) => Object.entries(selector).every(([k, v]) => labels[k] === v);

/** Every variable the typed configuration reads: each reader is called as `reader(env, 'NAME', …)`. */
const KNOWN = new Set(
  readdirSync('src/platform/config')
    .filter((name) => name.endsWith('.ts'))
    .flatMap((name) => [
      ...readFileSync(join('src/platform/config', name), 'utf8').matchAll(/\(env, '([A-Z][A-Z0-9_]*)'/g),
    ])
    .map((m) => m[1]),
);

/** The environment a container gets: its ConfigMaps, then its own entries; secrets as a placeholder marker. */
function environmentOf(container: Container): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    const map = ofKind('ConfigMap').find((c) => c.metadata.name === from.configMapRef?.name);
    expect({ envFrom: from, found: !!map }).toEqual({ envFrom: from, found: true });
    Object.assign(env, map!.data);
  }
  for (const entry of container.env ?? [])
    env[entry.name] = entry.valueFrom?.secretKeyRef ? `secret:${entry.valueFrom.secretKeyRef.key}` : entry.value!;
  return env;
}

/** A memory quantity (`384Mi`, `1Gi`) in MiB; NaN for anything else. */
function mebibytes(quantity: string | undefined): number {
  const match = /^(\d+)(Mi|Gi)$/.exec(quantity ?? '');
  return match ? Number(match[1]) * (match[2] === 'Gi' ? 1024 : 1) : NaN;
}

/** Values of the right shape for the secrets, so that loadConfig judges the rest of the environment. */
const SECRET_VALUES: Record<string, string> = {
  DATABASE_URL: 'postgresql://vault_forward:secret@pgbouncer:6432/vault_forward',
  REDIS_URL: 'redis://:secret@redis:6379',
  VAULT_MASTER_KEYS: `k1:${Buffer.alloc(32, 7).toString('base64')}`,
  CURSOR_SECRET: 'x'.repeat(44),
  LEDGER_SIGNING_KEY: TEST_LEDGER_KEY,
};

describe('deploy/kubernetes', () => {
  it('parses: every document has a kind we ship, at its stable apiVersion, and a name', () => {
    expect(docs.length).toBeGreaterThan(0);
    for (const doc of docs) {
      expect({ file: doc.file, kind: doc.kind, apiVersion: doc.apiVersion }).toEqual({
        file: doc.file,
        kind: doc.kind,
        apiVersion: API_VERSIONS[doc.kind] ?? 'a kind this test knows',
      });
      if (doc.kind !== 'Kustomization') expect(doc.metadata.name).toMatch(/^vault-forward(-[a-z0-9]+)*$/);
    }
    const names = docs.filter((d) => d.kind !== 'Kustomization').map((d) => `${d.kind}/${d.metadata.name}`);
    expect(new Set(names).size).toBe(names.length);
    for (const kind of ['StatefulSet', 'Deployment', 'Job', 'Service', 'HorizontalPodAutoscaler', 'ConfigMap'])
      expect({ kind, present: ofKind(kind).length > 0 }).toEqual({ kind, present: true });
    expect(ofKind('PodDisruptionBudget')).toHaveLength(2);
  });

  it('the kustomization lists every other file, and only files that exist', () => {
    const [kustomization] = ofKind('Kustomization');
    expect(kustomization.file).toBe('kustomization.yaml');
    expect([...kustomization.resources!].sort()).toEqual(files.filter((f) => f !== 'kustomization.yaml').sort());
  });

  it('sets only variables src/platform/config/ reads, every required one, and values loadConfig accepts', () => {
    expect(KNOWN.size).toBeGreaterThan(30); // the scan found the readers
    for (const workload of workloads)
      for (const container of containersOf(workload)) {
        const env = environmentOf(container);
        for (const name of Object.keys(env))
          expect({ workload: workload.metadata.name, name, known: KNOWN.has(name) }).toEqual({
            workload: workload.metadata.name,
            name,
            known: true,
          });
        // What production requires of every entry point (src/platform/config/config.ts, vault-config.ts).
        expect(env.NODE_ENV).toBe('production');
        for (const name of ['DATABASE_URL', 'VAULT_MASTER_KEYS', 'CURSOR_SECRET', 'LEDGER_SIGNING_KEY'])
          expect({ workload: workload.metadata.name, name, from: env[name] }).toEqual({
            workload: workload.metadata.name,
            name,
            from: `secret:${name}`,
          });
        const resolved = Object.fromEntries(
          Object.entries(env).map(([k, v]) => [k, v.startsWith('secret:') ? SECRET_VALUES[v.slice(7)] : v]),
        );
        expect(() => loadConfig(resolved)).not.toThrow();
      }
    // The API and the workers share the queue: both on Redis, with the same settings.
    for (const component of ['api', 'worker']) {
      const env = environmentOf(containersOf(byComponent(component))[0]);
      expect({ component, queue: env.QUEUE_BACKEND, redis: env.REDIS_URL }).toEqual({
        component,
        queue: 'redis',
        redis: 'secret:REDIS_URL',
      });
    }
  });

  it('takes every secret from the one Secret, by the variable name', () => {
    for (const workload of workloads)
      for (const container of containersOf(workload))
        for (const entry of container.env ?? []) {
          const ref = entry.valueFrom?.secretKeyRef;
          if (ref) expect(ref).toEqual({ name: SECRET, key: entry.name });
        }
    expect(ofKind('Secret')).toEqual([]); // referenced, never shipped with values
  });

  it('probes the routes the health controller serves, on a port the container declares', () => {
    const controller = readFileSync('src/app/health/health.controller.ts', 'utf8');
    const base = /@Controller\('([^']+)'\)/.exec(controller)![1];
    const routes = [...controller.matchAll(/@Get\('([^']+)'\)/g)].map((m) => `/${base}/${m[1]}`);
    expect(routes).toEqual(['/health/live', '/health/ready']);

    const api = containersOf(byComponent('api'))[0];
    expect(api.readinessProbe?.httpGet?.path).toBe('/health/ready');
    expect(api.livenessProbe?.httpGet?.path).toBe('/health/live');
    for (const probe of [api.startupProbe, api.readinessProbe, api.livenessProbe]) {
      expect(routes).toContain(probe!.httpGet!.path);
      const port = api.ports!.find((p) => p.name === probe!.httpGet!.port);
      expect(port?.containerPort).toBe(Number(environmentOf(api).PORT));
    }
    const metrics = api.ports!.find((p) => p.name === 'metrics');
    expect(metrics?.containerPort).toBe(Number(environmentOf(api).METRICS_PORT));

    // The worker serves no HTTP: its probe is the heartbeat script the image carries, on the file it names.
    const worker = containersOf(byComponent('worker'))[0];
    expect(worker.ports).toBeUndefined();
    expect(worker.livenessProbe?.exec?.command).toEqual(['node', 'dist/app/health/worker-healthcheck.js']);
    expect(existsSync('src/app/health/worker-healthcheck.ts')).toBe(true);
    expect(environmentOf(worker).WORKER_HEARTBEAT_FILE).toMatch(/^\/tmp\//);
  });

  it("runs the Dockerfile's image and entry points, as its user, with its port and spool directory", () => {
    const dockerfile = readFileSync('Dockerfile', 'utf8');
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1]) as string[];
    const exposed = Number(/^EXPOSE (\d+)$/m.exec(dockerfile)![1]);
    const images = new Set(workloads.flatMap((w) => containersOf(w).map((c) => c.image.split(':')[0])));
    expect([...images]).toEqual(['vault-forward']);

    expect(containersOf(byComponent('api'))[0].command).toEqual(cmd);
    expect(cmd).toEqual(['node', 'dist/main.js']);
    expect(containersOf(byComponent('worker'))[0].command).toEqual(['node', 'dist/worker.js']);
    expect(containersOf(byComponent('migrate'))[0].command).toEqual(['node', 'dist/cli/main.js', 'migrate']);
    for (const source of ['src/main.ts', 'src/worker.ts', 'src/cli/main.ts']) expect(existsSync(source)).toBe(true);
    expect(readFileSync('src/cli/main.ts', 'utf8')).toMatch(/'migrate'/);

    const api = containersOf(byComponent('api'))[0];
    expect(api.ports!.find((p) => p.name === 'http')?.containerPort).toBe(exposed);
    // The image's spool directory (made writable by `node` there), on the pod's own volume.
    const spool = environmentOf(api).FORWARD_RECORD_SPOOL_DIR;
    expect(dockerfile).toContain(spool);
    expect(api.volumeMounts).toContainEqual({ name: 'spool', mountPath: spool });
    // USER node: uid 1000 in the node images.
    expect(dockerfile).toMatch(/^USER node$/m);
    for (const workload of workloads) expect(template(workload).spec.securityContext?.runAsUser).toBe(1000);
  });

  it('gives each API pod a spool volume of its own that outlives the pod (decision 0110), the workers none', () => {
    const api = byComponent('api');
    expect(api.kind).toBe('StatefulSet');
    expect(api.spec.volumeClaimTemplates.map((v: Doc) => v.metadata.name)).toEqual(['spool']);
    expect(api.spec.volumeClaimTemplates[0].spec.accessModes).toEqual(['ReadWriteOnce']);
    expect(api.spec.persistentVolumeClaimRetentionPolicy).toEqual({ whenDeleted: 'Retain', whenScaled: 'Retain' });
    expect(environmentOf(containersOf(api)[0]).WEB_CONCURRENCY).toBe('1');
    const worker = byComponent('worker');
    expect(worker.kind).toBe('Deployment');
    // Scratch only (/tmp, emptyDir): nothing of the worker's outlives its pod.
    expect(containersOf(worker)[0].volumeMounts).toEqual([{ name: 'tmp', mountPath: '/tmp' }]);
    expect(template(worker).spec.volumes).toEqual([{ name: 'tmp', emptyDir: { sizeLimit: '64Mi' } }]);
  });

  it('requests resources and stops gracefully within its grace period', () => {
    for (const workload of workloads) {
      for (const container of containersOf(workload)) {
        expect(container.resources?.requests?.cpu).toMatch(/^\d+m?$/);
        const request = mebibytes(container.resources?.requests?.memory);
        expect(request).toBeGreaterThanOrEqual(128);
        expect(mebibytes(container.resources?.limits?.memory)).toBeGreaterThanOrEqual(request);
      }
    }
    // src/app/bootstrap/shutdown.ts gives the graceful stop 25 s, after the API's preStop; Kubernetes must wait
    // longer than both before SIGKILL.
    const grace = Number(
      /CLOSE_GRACE_MS = ([\d_]+)/.exec(readFileSync('src/app/bootstrap/shutdown.ts', 'utf8'))![1].replace('_', ''),
    );
    const [api] = containersOf(byComponent('api'));
    expect(api.lifecycle?.preStop?.exec?.command).toEqual(['sleep', expect.stringMatching(/^\d+$/)]);
    const preStopMs = Number(api.lifecycle!.preStop!.exec!.command[1]) * 1000;
    expect(template(byComponent('api')).spec.terminationGracePeriodSeconds! * 1000).toBeGreaterThan(grace + preStopMs);
    expect(template(byComponent('worker')).spec.terminationGracePeriodSeconds! * 1000).toBeGreaterThan(grace);
  });

  it('runs every long-lived container on a read-only root filesystem, /tmp its only writable scratch', () => {
    for (const component of ['api', 'worker']) {
      const workload = byComponent(component);
      for (const container of containersOf(workload)) {
        expect({ component, readOnly: container.securityContext?.readOnlyRootFilesystem }).toEqual({
          component,
          readOnly: true,
        });
        expect(container.volumeMounts?.map((m) => m.mountPath)).toContain('/tmp');
      }
    }
  });

  it('refuses all traffic but what it names: the API in, metrics from monitoring, data stores and public hosts out', () => {
    const policies = ofKind('NetworkPolicy');
    const selected = (policy: Doc) =>
      workloads.filter((w) => matches(policy.spec.podSelector.matchLabels, template(w).metadata.labels));
    const deny = policies.find((p) => !p.spec.ingress && !p.spec.egress)!;
    expect(deny.spec.policyTypes.sort()).toEqual(['Egress', 'Ingress']);
    expect(selected(deny)).toHaveLength(workloads.length);

    // In: only the API's pods, only on ports its container declares.
    const ingress = policies.filter((p) => p.spec.ingress);
    expect(ingress.flatMap(selected).map((w) => w.metadata.name)).toEqual([byComponent('api').metadata.name]);
    const declared = containersOf(byComponent('api')).flatMap((c) => (c.ports ?? []).map((p) => p.name));
    const opened = ingress.flatMap((p) => p.spec.ingress.flatMap((rule: any) => rule.ports.map((q: any) => q.port)));
    expect(opened.sort()).toEqual([...declared].sort());

    // Out: every pod; the public rule excludes what the address guard refuses (private, loopback, link-local:
    // the cloud metadata endpoint), and the private ranges are open only on the data stores' ports.
    const egress = policies.filter((p) => p.spec.egress);
    for (const policy of egress) expect(selected(policy)).toHaveLength(workloads.length);
    const rules = egress.flatMap((p) => p.spec.egress as Array<{ to: any[]; ports?: any[] }>);
    const publicRule = rules.find((r) => r.to.some((t) => t.ipBlock?.cidr === '0.0.0.0/0'))!;
    const v4 = publicRule.to.find((t) => t.ipBlock?.cidr === '0.0.0.0/0').ipBlock.except;
    const v6 = publicRule.to.find((t) => t.ipBlock?.cidr === '::/0').ipBlock.except;
    expect(v4).toEqual(
      expect.arrayContaining(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '127.0.0.0/8', '169.254.0.0/16']),
    );
    expect(v6).toEqual(expect.arrayContaining(['::1/128', 'fc00::/7', 'fe80::/10']));
    const privateRule = rules.find((r) => r.to.some((t) => t.ipBlock?.cidr === '10.0.0.0/8'))!;
    expect(privateRule.ports!.map((p) => p.port).sort()).toEqual([26379, 5432, 6379, 6432]);
  });

  it('selects what it names: selectors, Services, the HPA, the PodDisruptionBudgets', () => {
    for (const workload of workloads.filter((w) => w.kind !== 'Job')) {
      const labels = template(workload).metadata.labels;
      expect(matches(workload.spec.selector.matchLabels, labels)).toBe(true);
      expect(workload.metadata.labels).toEqual(expect.objectContaining(workload.spec.selector.matchLabels));
    }
    const selects = (selector: Labels) =>
      workloads.filter((w) => w.kind !== 'Job' && matches(selector, template(w).metadata.labels));
    for (const service of ofKind('Service')) {
      const selected = selects(service.spec.selector);
      expect({ service: service.metadata.name, selects: selected.map((w) => w.metadata.name) }).toEqual({
        service: service.metadata.name,
        selects: [byComponent('api').metadata.name],
      });
      const ports = containersOf(selected[0]).flatMap((c) => c.ports ?? []);
      for (const port of service.spec.ports) expect(ports.map((p) => p.name)).toContain(port.targetPort);
    }
    const api = byComponent('api');
    const governing = ofKind('Service').find((s) => s.metadata.name === api.spec.serviceName);
    expect(governing?.spec.clusterIP).toBe('None');
    expect(ofKind('Service').filter((s) => s.spec.clusterIP !== 'None')).toHaveLength(1);

    const [hpa] = ofKind('HorizontalPodAutoscaler');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: api.apiVersion, kind: api.kind, name: api.metadata.name });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);

    const budgeted = ofKind('PodDisruptionBudget').map((pdb) => selects(pdb.spec.selector.matchLabels));
    expect(budgeted.map((s) => s.map((w) => w.metadata.name)).sort()).toEqual(
      [[api.metadata.name], [byComponent('worker').metadata.name]].sort(),
    );
    // A budget that allows one pod down needs more than one pod to begin with.
    expect(api.spec.replicas).toBeGreaterThanOrEqual(2);
    expect(byComponent('worker').spec.replicas).toBeGreaterThanOrEqual(2);
  });
});
