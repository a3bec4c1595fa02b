import type { AppConfig } from '../../../platform/config/config';
import { ProblemException } from '../../../platform/problem/problem';
import { addressKind } from '../../forwarding-setup/targets/addresses';
import { transportOf } from '../../forwarding-setup/targets/transport';
import { OutboundErrors } from './outbound.errors';

/**
 * The outbound policy (forwarding-setup/targets/transport.ts) where a URL is about to be called: a URL it
 * refuses is the same problem whatever leads to it (a target, a token endpoint, a callback), 400
 * insecure-target or 403 target-address-forbidden, naming `subject` and the field that named the URL.
 * Returns whether the URL is trusted: dialled without the address guard (DispatcherPool).
 */
export function checkOutbound(
  insecureHosts: AppConfig['forwardInsecureHosts'],
  url: URL,
  subject: string,
  field: { location: 'header' | 'body'; name: string; prefix?: string },
): boolean {
  const transport = transportOf(insecureHosts, url);
  const at = (message: string) => [
    { location: field.location, name: field.name, message: (field.prefix ?? '') + message },
  ];
  if (transport.refused === 'insecure')
    throw new ProblemException(OutboundErrors.insecureTarget, `${subject} must be an https URL.`, at('must use https'));
  if (transport.refused === 'address')
    throw new ProblemException(
      OutboundErrors.targetAddressForbidden,
      `${subject} is ${addressKind(transport.reason)}, which may not be forwarded to.`,
      at(`${transport.reason} address`),
    );
  return transport.trusted;
}
