// The eSpeak NG voices the gateway offers. A voice id is a language, optionally followed by
// `+variant` (`en-us+f3`), exactly as the eSpeak command line takes it. Each language and variant
// listed here was checked against the data built into the espeak-ng 1.0.2 package (its `--voices`
// and `--voices=variant` listings); klatt variants are left out because that build has no Klatt
// synthesizer.

/** Languages (and regional accents) offered; `en` is eSpeak's British English. */
export const ESPEAK_LANGUAGES = [
  'en',
  'en-us',
  'en-gb',
  'en-gb-x-rp',
  'en-gb-scotland',
  'de',
  'fr',
  'es',
  'it',
  'pt',
  'pt-br',
  'nl',
  'pl',
  'sv',
  'ru',
] as const;

/** Voice variants: f1-f5 female, m1-m7 male, plus a few effects. */
export const ESPEAK_VARIANTS = [
  'f1', 'f2', 'f3', 'f4', 'f5',
  'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7',
  'whisper', 'whisperf', 'croak',
] as const;

export const ESPEAK_DEFAULT_VOICE = 'en-us';

/** The voices a catalog lists: every language, and female variants of the English ones. */
export const ESPEAK_VOICES: readonly string[] = [
  ...ESPEAK_LANGUAGES,
  'en+f3',
  'en-us+f3',
  'en-us+f4',
  'en-gb+f2',
  'en-us+m3',
  'en-us+whisper',
];

const languages = new Set<string>(ESPEAK_LANGUAGES);
const variants = new Set<string>(ESPEAK_VARIANTS);

/** True for `language` or `language+variant` built from the two lists above. */
export function isEspeakVoice(voice: string): boolean {
  const [language = '', variant, extra] = voice.split('+');
  return extra === undefined && languages.has(language) && (variant === undefined || variants.has(variant));
}
