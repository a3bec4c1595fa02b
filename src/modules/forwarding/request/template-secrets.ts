import { echoed } from '../../../platform/problem/echo';
import { ProblemException } from '../../../platform/problem/problem';
import {
  AUTHENTICATIONS_HEADER,
  type UsableAuthenticationMethod,
} from '../../forwarding-setup/authentication-methods/forward-authentications.service';
import { secretUses, TemplateSecrets } from '../../vault/placeholders/placeholders';
import type { PlanScans } from './forward-plan';
import { ForwardingErrors } from './forwarding.errors';
import { HEADER_PREFIX } from './forward-headers';

const NONE: TemplateSecrets = new Map();

/**
 * The secrets that `SECRET.name` reads in a forward's templates (decision 0102): the `value` of each
 * `template-secrets` method listed in x-vault-forward-authentications, by its `name`. Only that kind is read
 * (an hmac-signature's or mutual-tls's secret never is). A name that no listed method holds, or that two hold,
 * is a 400 naming the placeholder, the secret's name and the offset, never a value. Run at planning (so a
 * queued forward is refused when asked for) and again at send time on the methods read then; the plan holds
 * only the method ids, never a secret.
 */
export function templateSecrets(
  methods: readonly UsableAuthenticationMethod[],
  scans: PlanScans,
  headerTemplates: ReadonlyArray<readonly [string, string]>,
): TemplateSecrets {
  const uses = [
    ...(scans.body ? secretUses(scans.body).map((use) => ({ use, location: 'body' as const, name: 'body' })) : []),
    ...scans.headers.flatMap((scan, index) =>
      secretUses(scan).map((use) => ({
        use,
        location: 'header' as const,
        name: `${HEADER_PREFIX}${headerTemplates[index][0]}`,
      })),
    ),
  ];
  if (uses.length === 0) return NONE;
  const held = new Map<string, UsableAuthenticationMethod[]>();
  for (const method of methods) {
    if (method.kind !== 'template-secrets') continue;
    const name = method.fields.name;
    held.set(name, [...(held.get(name) ?? []), method]);
  }
  const secrets = new Map<string, Buffer>();
  for (const { use, location, name } of uses) {
    const holders = held.get(use.name) ?? [];
    if (holders.length === 1) {
      secrets.set(use.name, Buffer.from(holders[0].fields.value ?? '', 'utf8'));
      continue;
    }
    const secret = `${use.placeholder}: SECRET.${echoed(use.name)} at offset ${use.at}`;
    const message =
      holders.length === 0
        ? `${secret} is held by no template-secrets method listed in ${AUTHENTICATIONS_HEADER}`
        : `${secret} is held by more than one listed method (${holders.map((m) => m.id).join(', ')}); list one`;
    throw new ProblemException(ForwardingErrors.invalidPlaceholder, message, [{ location, name, message }]);
  }
  return secrets;
}
