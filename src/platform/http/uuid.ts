const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Any UUID version, either case: ids in paths and headers are checked before they reach SQL. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
