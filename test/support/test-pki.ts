import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { testTempDir } from './temp-data-dir';

/**
 * Certificate authorities and certificates made with the openssl CLI in a temporary folder: an
 * implementation independent of the service's code, as a real downstream would have.
 */
export interface Pem {
  cert: string;
  key: string;
}

/** `openssl req` arguments for a new P-256 key, unencrypted, written to `keyFile`. */
function newP256Key(keyFile: string): string[] {
  return ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', keyFile];
}

export class TestCa {
  readonly dir: string;
  readonly cert: string;
  private serial = 1;

  private constructor(
    dir: string,
    private readonly name: string,
  ) {
    this.dir = dir;
    const keyFile = join(dir, `${name}.key`);
    openssl([
      'req',
      '-x509',
      ...newP256Key(keyFile),
      '-out',
      join(dir, `${name}.pem`),
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ]);
    this.cert = readFileSync(join(dir, `${name}.pem`), 'utf8');
  }

  /** Its files live in a temp folder of the test file, removed after the file's last test. */
  static create(name: string): TestCa {
    return new TestCa(testTempDir('vf-pki-'), name);
  }

  /**
   * A leaf signed by this CA: a server certificate for 127.0.0.1 (and for `dnsNames`, when given), or a
   * client certificate.
   */
  issue(commonName: string, usage: 'server' | 'client', dnsNames: string[] = []): Pem {
    const base = join(this.dir, `${commonName}-${this.serial++}`);
    openssl(['req', ...newP256Key(`${base}.key`), '-out', `${base}.csr`, '-subj', `/CN=${commonName}`]);
    const ext =
      usage === 'server'
        ? `subjectAltName=${[...dnsNames.map((name) => `DNS:${name}`), 'IP:127.0.0.1'].join(',')}\n` +
          'basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n'
        : 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n';
    writeFileSync(`${base}.ext`, ext);
    openssl([
      'x509',
      '-req',
      '-in',
      `${base}.csr`,
      '-CA',
      join(this.dir, `${this.name}.pem`),
      '-CAkey',
      join(this.dir, `${this.name}.key`),
      '-set_serial',
      String(Date.now() + this.serial),
      '-days',
      '2',
      '-out',
      `${base}.pem`,
      '-extfile',
      `${base}.ext`,
    ]);
    return { cert: readFileSync(`${base}.pem`, 'utf8'), key: readFileSync(`${base}.key`, 'utf8') };
  }

  /** The key in PKCS#8 PEM encrypted under the passphrase. */
  encryptKey(key: string, passphrase: string): string {
    const file = join(this.dir, `plain-${this.serial++}.key`);
    writeFileSync(file, key);
    return openssl(['pkcs8', '-topk8', '-in', file, '-v2', 'aes-256-cbc', '-passout', `pass:${passphrase}`]);
  }
}

function openssl(args: string[]): string {
  return execFileSync('openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}
