import { PassThrough } from 'node:stream';
import { pino } from 'pino';
import { LINE_OPTIONS, logDestination } from '../../src/platform/logging/logging.module';

/** A stdout that says it is (or is not) a terminal, and keeps what is written to it. */
function stdout(isTTY: boolean) {
  const stream = Object.assign(new PassThrough(), { isTTY });
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { stream, text: () => text };
}

describe('Log lines: JSON for a collector, readable on a terminal, masked either way', () => {
  const CARD = '4111111111111111';

  it('off a terminal, each line is one JSON object', () => {
    const out = stdout(false);
    const logger = pino({ ...LINE_OPTIONS }, logDestination(out.stream));
    logger.info({ note: `card ${CARD}` }, 'stored');
    const [line] = out.text().trim().split('\n');
    expect(JSON.parse(line)).toMatchObject({ level: 30, msg: 'stored' });
    expect(out.text()).not.toContain(CARD);
  });

  it('on a terminal, the line is pretty (level word, message, fields on their own lines) and the card masked', () => {
    const out = stdout(true);
    const logger = pino({ ...LINE_OPTIONS }, logDestination(out.stream));
    logger.warn({ note: `card ${CARD}` }, 'stored');
    const text = out.text();
    expect(() => JSON.parse(text.trim())).toThrow();
    expect(text).toMatch(/WARN.*stored/);
    expect(text).toMatch(/\n\s+note: "card [^"]*"/);
    expect(text).not.toContain(CARD);
    expect(text).not.toContain('pid');
  });
});
