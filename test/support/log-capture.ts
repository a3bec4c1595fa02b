/** A pino destination that keeps every JSON line, so tests can read what would have been logged. */
export class LogCapture {
  private readonly chunks: string[] = [];

  write(chunk: string): void {
    this.chunks.push(chunk);
  }

  get text(): string {
    return this.chunks.join('');
  }

  get lines(): Array<Record<string, any>> {
    return this.text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as Record<string, any>);
  }

  /** The request log line (`REQUEST_LOG`) of a request id. */
  requestLine(requestId: string): Record<string, any> | undefined {
    return this.lines.find((line) => line.req?.id === requestId && line.res);
  }
}
