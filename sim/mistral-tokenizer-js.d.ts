// The package ships no types. Import it only through sim/mistral-tokenizer.ts.
declare module 'mistral-tokenizer-js' {
  interface MistralTokenizerJs {
    encode(text: string, addBosToken?: boolean, addPrecedingSpace?: boolean, logPerformance?: boolean): number[] | undefined;
    decode(tokenIds: readonly number[], addBosToken?: boolean, addPrecedingSpace?: boolean): string;
    vocabById: string[];
    vocabByString: Map<string, number>;
  }
  const mistralTokenizer: MistralTokenizerJs;
  export default mistralTokenizer;
}
