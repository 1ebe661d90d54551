// The {{name}} plugin for Toolcell: its tools, and what the component exports.

import { Plugin, Output, schema } from "toolcell";

const plugin = new Plugin();

plugin.tool(
  {
    name: "hello",
    title: "Hello",
    description: "Greet someone by name.",
    category: "read",
    readOnly: true,
    openWorld: false,
    input: schema.object({
      name: schema.string("Who to greet."),
    }),
  },
  ({ name }) => Output.text(`Hello, ${name}!`),
);

export const tools = plugin.exports();
