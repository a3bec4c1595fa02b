import { AUTHENTICATION_KINDS, FieldDescription, KINDS } from './kinds';

/**
 * The field tables of docs/authentication-methods.md, from the kind descriptions. The doc holds this
 * text between `<!-- kinds:start -->` and `<!-- kinds:end -->`; a unit test fails when they differ,
 * so the doc cannot drift from what the service validates.
 */
export function kindsMarkdown(): string {
  const format = (f: FieldDescription) =>
    f.enum
      ? f.enum.map((e) => `\`${e}\``).join(' \\| ')
      : `${f.format}${f.default !== undefined ? ` (default \`${f.default}\`)` : ''}`;
  return AUTHENTICATION_KINDS.map((kind) => {
    const d = KINDS[kind];
    return [
      `### \`${kind}\`: ${d.title}`,
      '',
      d.description,
      '',
      '| Field | Secret | Required | Format | Description |',
      '|---|---|---|---|---|',
      ...d.fields.map(
        (f) =>
          `| \`${f.name}\` | ${f.secret ? 'yes' : 'no'} | ${f.required ? 'yes' : 'no'} | ${format(f)} | ${f.description} |`,
      ),
    ].join('\n');
  }).join('\n\n');
}
