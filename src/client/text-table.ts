// Plain-text tables for terminals: columns padded to their widest cell, numbers right-aligned.

export type Align = 'left' | 'right';

export function formatTable(header: string[], rows: string[][], align: Align[] = []): string {
  const lines = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...lines.map((line) => (line[column] ?? '').length)));
  return lines
    .map((line) =>
      line
        .map((cell, column) => (align[column] === 'right' ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
