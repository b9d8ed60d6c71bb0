/**
 * The words the seed writes its text from (bench/seed.ts), so that a word matches a realistic
 * share of documents (a two-word query about 1–2% of posts) rather than every row; the search
 * scenarios ask for pairs of them.
 */
export const VOCABULARY = `gears engine mill lathe compiler parser kernel scheduler robot drone sensor battery solar
  wind turbine pump valve circuit board firmware driver shader render mesh texture camera lens
  printer filament resin laser cutter router spindle bearing shaft pulley belt chain sprocket motor
  servo stepper encoder arduino raspberry esp32 fpga verilog rust typescript python golang haskell
  elixir erlang zig swift kotlin java scala clojure lisp forth assembly wasm browser server client
  database index query cache queue stream socket protocol packet network mesh radio antenna
  satellite telescope microscope keyboard mouse display screen panel terminal shell editor plugin
  theme layout widget button slider canvas chart graph map tile vector raster audio synth
  oscillator filter envelope sequencer drum guitar pedal amplifier speaker headphone microphone
  recorder garden greenhouse irrigation soil compost beehive chicken coop fence shed workshop bench
  clamp vise chisel plane saw drill bit screw bolt nut washer rivet weld solder flux wire cable
  connector plug fuse relay switch transistor diode resistor capacitor inductor transformer
  oscilloscope multimeter logic analyzer bus uart spi i2c usb ethernet wifi bluetooth lora zigbee
  matter thread homekit dashboard metric alert log trace profile benchmark latency throughput
  memory storage disk backup sync merge branch commit review release deploy container cluster node
  pod service gateway proxy balancer firewall token secret vault key certificate signature hash
  cipher random entropy puzzle game level sprite physics collision particle shader lighting shadow
  voxel terrain biome quest inventory crafting multiplayer lobby match ranking leaderboard tutorial`
  .split(/\s+/)
  .filter(Boolean);
