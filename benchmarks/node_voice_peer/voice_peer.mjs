// The reference client's media stack for voice_bench.py: an @livekit/rtc-node participant that
// joins with the URL and token given and plays a 440 Hz tone (48 kHz mono, 10 ms frames) into
// an AudioSource, as the reference client does once FFmpeg has decoded a file. It prints the
// fraction of one core its process used while playing, less what it used connected and silent.
//
//   node voice_peer.mjs <url> <token> [idle seconds] [play seconds]
import { AudioFrame, AudioSource, LocalAudioTrack, Room, TrackPublishOptions, TrackSource, dispose } from '@livekit/rtc-node';

const [url, token, idleArg, playArg] = process.argv.slice(2);
const idleSeconds = Number(idleArg || 5);
const playSeconds = Number(playArg || 8);

function cpuSeconds() {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}

async function measure(seconds, work) {
  const cpu0 = cpuSeconds();
  const wall0 = performance.now();
  await work(seconds);
  return (cpuSeconds() - cpu0) / ((performance.now() - wall0) / 1000);
}

const room = new Room();
await room.connect(url, token, { autoSubscribe: false, dynacast: false });
const source = new AudioSource(48000, 1);
const track = LocalAudioTrack.createAudioTrack('reference-audio', source);
const options = new TrackPublishOptions();
options.source = TrackSource.SOURCE_MICROPHONE;
await room.localParticipant.publishTrack(track, options);

const idle = await measure(idleSeconds, (s) => new Promise((resolve) => setTimeout(resolve, s * 1000)));
let sent = 0;
const busy = await measure(playSeconds, async (s) => {
  const frames = s * 100;
  for (let i = 0; i < frames; i += 1) {
    const data = new Int16Array(480);
    for (let j = 0; j < 480; j += 1) {
      data[j] = Math.round(12000 * Math.sin((2 * Math.PI * 440 * (sent + j)) / 48000));
    }
    sent += 480;
    await source.captureFrame(new AudioFrame(data, 48000, 1, 480));
  }
  await source.waitForPlayout();
});
console.log(`node_voice_playback_cpu_per_stream: ${Math.max(busy - idle, 0).toFixed(3)}`);
await room.disconnect();
await dispose();
