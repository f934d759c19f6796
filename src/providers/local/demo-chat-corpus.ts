// Training text of the built-in demo chat model (see bigram-chat-gguf.ts).
// Written for this repository (no third-party text); same licence as the repository.
// Each paragraph is one "assistant answer": the model learns which word follows which, where
// answers start (after the assistant marker) and where they end (the end-of-turn token).

export const DEMO_CHAT_CORPUS = `
Hello! I am the offline demo model of this gateway. I am very small, so my answers are short and often make little sense.

Hi there. I am a tiny local language model. I run on this machine without a network, and I learned only a few pages of text.

Thank you for your question. I am only a demo, so I cannot really answer it. A real model can be configured for real answers.

I am a word bigram model. I choose each next word by looking at the word before it. I do not understand the question.

This gateway sells chat, images and speech. Each request is paid with a small amount of test money on a local chain.

Every request has a price. The price is quoted first, then the client pays, then the gateway does the work and settles the payment.

When the payment is valid, the gateway runs the model and returns the answer. When the model fails, the payment is not settled.

The sandbox runs local chains on this machine. The test money has no value. It is only there so that the whole flow can be tried offline.

A language model predicts the next word from the words before it. Large models look at many words. I look at one word only.

My answers are generated, not retrieved. They may look like sentences, but they are not facts. Please do not trust them.

To get useful answers, configure an upstream provider with a real model. The demo model is for tests and for trying the payment flow.

The sun is a star. The earth turns around the sun once a year. The moon turns around the earth about once a month.

Water boils at one hundred degrees at sea level. Ice melts at zero degrees. Most of the earth is covered with water.

A cat is a small animal. A dog is a loyal friend. Birds can fly, and fish can swim in the sea.

Trees grow from small seeds. They need water, light and time. Some trees live for hundreds of years.

The city is busy in the morning. People walk to work, buses stop at the corner, and the small shops open their doors.

In the evening the streets are quiet. The lights come on, and people go home to rest.

A good story has a beginning, a middle and an end. The hero wants something, meets a problem, and finds a way.

Once upon a time there was a small robot. It wanted to learn to talk, so it read every page it could find.

The robot learned many words, but it did not learn what they meant. It could talk all day and still say nothing.

Music is made of sound and time. A song has a melody, a rhythm and often some words.

Numbers are useful. Two and two make four. Ten times ten is one hundred.

A computer follows instructions. A program is a list of instructions. A good program is clear, small and tested.

Tests show that the code works. A test runs the code with a known input and checks the output.

The model reads the prompt as tokens. A token is a word or a piece of a word. The price of a request depends on the tokens.

The answer is short because the limit on tokens is small. Ask for more tokens if you want a longer answer.

I can write a few words about almost anything, but I know almost nothing. That is the honest truth about me.

Good morning! The weather is nice today. The sky is blue and the air is fresh.

It is raining today. Take an umbrella and walk slowly. The rain will stop in the afternoon.

Food gives the body energy. Bread, rice, fruit and vegetables are common food in many places.

A book is a good friend. You can read it at home, on the bus, or in the park under a tree.

Learning takes time. Read a little every day, ask questions, and try again when you fail.

The first step is the hardest. After that, each step is a little easier than the one before.

Yes, I can try. Here is a short answer: the question is interesting, and the answer is not known to me.

No, I am not a person. I am a small program with a table of word pairs and their counts.

Sorry, I do not know. I am the demo model, and I only know a few hundred words.

The gateway keeps a record of every payment. A payment can be used once only, and a failed request is not charged.

Images and speech are also available. The demo image model draws a simple picture, and the demo speech model reads text aloud.

The river flows from the mountains to the sea. Along the way it passes small towns, old bridges and green fields.

The mountains are high and cold. Snow stays on the top for most of the year.

A friend listens, helps and tells the truth. A good friend is hard to find and easy to keep.

The library opens at nine in the morning and closes at six in the evening. It is quiet inside, and the books are free to read.

The train leaves at noon. It stops at every small town and reaches the coast in the evening.

Time moves on. Days become weeks, weeks become months, and months become years.

That is a good question. The short answer is that I do not know, and the long answer is the same.

Here is a simple plan: start small, test often, and keep the parts that work.
`;
