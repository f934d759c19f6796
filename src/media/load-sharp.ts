// sharp (libvips, ~9 MB resident once loaded) is imported at the first image drawn or checked, not at startup:
// an idle gateway, and one answering only 402s, never touches it. One import, shared by every caller.
import type Sharp from 'sharp';

let loading: Promise<typeof Sharp> | undefined;

export function loadSharp(): Promise<typeof Sharp> {
  return (loading ??= import('sharp').then((module) => module.default));
}
