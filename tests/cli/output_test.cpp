// SPDX-License-Identifier: Apache-2.0
// Output integrity (issue 18, part 4): a report that cannot be written (a closed or full stdout, a
// file past the size limit, a name too long) is an error with the OS's reason and a non-zero
// status, in every format, and leaves no temporary file behind; names are shown without raw
// control sequences in every human format; JSON takes any UTF-8.
#include "cli_runner.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using roofline::test::cli_result;
using roofline::test::cli_setup;
using roofline::test::contains;
using roofline::test::read_text;
using roofline::test::run_cli;
using roofline::test::source_path;
using roofline::test::temp_dir;

namespace {

const std::string alexnet = source_path("examples/alexnet-classifier.yaml");
const char *const formats[] = {"table", "json", "csv", "markdown", "html", "svg"};

using output = roofline::test::cli_setup::output;

/// The first control character (C0 but tab and line feed, DEL, C1 as UTF-8) in `text`, or -1.
int first_control(const std::string &text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F)
      return c;
    if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(text[i + 1]) < 0xA0)
      return static_cast<unsigned char>(text[i + 1]);
  }
  return -1;
}

} // namespace

// ------------------------------------------------------------------ standard output

TEST_CASE("a report to a closed stdout or a full disk (/dev/full) fails with the OS's reason, in "
          "every format") {
  // Before the fix: exit 1 with "cannot write the report to standard output", no reason.
  for (const auto &[setup, reason] :
       {std::pair{cli_setup{output::closed}, "Bad file descriptor"},
        std::pair{cli_setup{output::dev_full}, "No space left on device"}})
    for (const std::string format : formats) {
      CAPTURE(format);
      const cli_result r = run_cli({alexnet, "--gpu", "h100", "--format", format}, setup);
      INFO("stderr: " << r.err);
      CHECK(r.status == 1);
      CHECK(contains(r.err, std::string("cannot write to standard output: ") + reason));
    }
  // Every command that prints: compare, specs, --help.
  for (const std::vector<std::string> &args :
       {std::vector<std::string>{"compare", alexnet, "--gpus", "h100,a100"},
        std::vector<std::string>{"specs"}, std::vector<std::string>{"--help"},
        std::vector<std::string>{"--version"}}) {
    CAPTURE(args.front());
    const cli_result r = run_cli(args, cli_setup{output::dev_full});
    INFO("stderr: " << r.err);
    CHECK(r.status == 1);
    CHECK(contains(r.err, "No space left on device"));
  }
}

TEST_CASE("--plot and --html beside a stdout that fails: the files are whole, the status says "
          "the report was lost") {
  temp_dir dir;
  const cli_result r =
      run_cli({alexnet, "--gpu", "h100", "--plot", dir / "c.svg", "--html", dir / "p.html"},
              cli_setup{output::closed});
  CHECK(r.status == 1);
  CHECK(contains(r.err, "Bad file descriptor"));
  CHECK(read_text(dir / "c.svg").rfind("</svg>") != std::string::npos);
  CHECK(read_text(dir / "p.html").rfind("</html>") != std::string::npos);
}

TEST_CASE("nothing written to a closed stdout lands in a file opened later") {
  // fd 1 closed at start would be the next file opened (the --output temporary): held by
  // /dev/null, the JSON file gets the JSON and only it.
  temp_dir dir;
  const cli_result r =
      run_cli({alexnet, "--gpu", "h100", "--output", dir / "r.json"}, cli_setup{output::closed});
  CHECK(r.status == 1);
  CHECK_FALSE(nlohmann::json::parse(read_text(dir / "r.json"), nullptr, false).is_discarded());
}

// ------------------------------------------------------------------ --output, --plot, --html

TEST_CASE("a file that cannot be written whole fails with the OS's reason and leaves nothing") {
  // RLIMIT_FSIZE at 256 bytes: every report is larger, so the write fails (EFBIG) part way.
  for (const auto &[option, name] : {std::pair<std::string, std::string>{"--output", "r.json"},
                                     {"--output", "r.csv"},
                                     {"--output", "r.md"},
                                     {"--output", "r.txt"},
                                     {"--plot", "c.svg"},
                                     {"--html", "p.html"}}) {
    CAPTURE(option);
    CAPTURE(name);
    temp_dir dir;
    const cli_result r =
        run_cli({alexnet, "--gpu", "h100", option, dir / name}, cli_setup{output::captured, 256});
    INFO("stderr: " << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty()); // files first: no report on stdout when one of them fails
    CHECK(contains(r.err, option + " " + (dir / name) + ": cannot write: File too large"));
    CHECK(dir.files().empty()); // no temporary file left
  }
}

TEST_CASE("--output with a 255-byte name works; a 256-byte one fails with the OS's reason") {
  temp_dir dir;
  const std::string longest = std::string(250, 'r') + ".json"; // NAME_MAX on Linux
  REQUIRE(longest.size() == 255);
  const cli_result ok = run_cli({alexnet, "--gpu", "h100", "--output", dir / longest});
  INFO("stderr: " << ok.err);
  CHECK(ok.status == 0);
  CHECK(dir.files() == std::vector<std::string>{longest}); // and no temporary file
  CHECK_FALSE(nlohmann::json::parse(read_text(dir / longest), nullptr, false).is_discarded());

  temp_dir other;
  const std::string too_long = "r" + longest;
  const cli_result r = run_cli({alexnet, "--gpu", "h100", "--output", other / too_long});
  CHECK(r.status == 2);
  CHECK(contains(r.err, "cannot write: File name too long"));
  CHECK(other.files().empty());
}

TEST_CASE("every --output failure says why") {
  temp_dir dir;
  { std::ofstream file(dir / "plain"); }
  for (const auto &[target, reason] :
       {std::pair{dir / "missing/r.json",
                  "cannot write a temporary file beside it: No such file or "
                  "directory"},
        std::pair{dir / "plain/r.json",
                  "cannot write a temporary file beside it: Not a directory"}}) {
    CAPTURE(target);
    const cli_result r = run_cli({alexnet, "--gpu", "h100", "--output", target});
    CHECK(r.status == 2);
    CHECK(contains(r.err, "--output " + target + ": " + reason));
  }
  fs::create_directory(dir / "r.json");
  const cli_result r = run_cli({alexnet, "--gpu", "h100", "--output", dir / "r.json"});
  CHECK(r.status == 2);
  CHECK(contains(r.err, "cannot write: Is a directory"));
  CHECK(dir.files().size() == 2); // plain and r.json: no temporary file
}

// ------------------------------------------------------------------ what a file may replace

TEST_CASE("an output naming an input or another output is refused before any work, by any name") {
  // Before: `--emit-yaml cfg.json` replaced the config it read with YAML, and `--output r.json
  // --emit-yaml r.json` wrote the report then replaced it, both exit 0.
  temp_dir dir;
  const std::string config = dir / "cfg.json";
  const std::string config_text = read_text(source_path("examples/configs/gpt2.json"));
  std::ofstream(config, std::ios::binary) << config_text;
  fs::create_symlink(config, dir / "link.json");
  REQUIRE(::link(config.c_str(), (dir / "hard.json").c_str()) == 0);
  const std::string spec = dir / "gpu.yaml";
  std::ofstream(spec) << read_text(source_path("specs/h100-sxm5.yaml"));
  fs::create_directory(dir / "sub");
  fs::create_symlink(dir / "r.json", dir / "dangling.yaml"); // r.json is made by --output
  struct refused {
    std::vector<std::string> args;
    std::string message;
  };
  const std::string same_input = ": writing it would replace what is read; name another file";
  const std::string same_output = " are the same file: one would replace the other";
  for (const refused &c : std::vector<refused>{
           {{config, "--emit-yaml", config},
            "--emit-yaml " + config + " is the network file " + config + same_input},
           {{config, "--emit-yaml", dir / "sub/../cfg.json"}, "is the network file"},
           {{config, "--emit-yaml", dir / "link.json"}, "is the network file"},
           {{config, "--emit-yaml", dir / "hard.json"}, "is the network file"},
           {{dir / "link.json", "--output", dir / "./cfg.json"}, "--output"},
           {{config, "--gpu", spec, "--emit-yaml", spec},
            "--emit-yaml " + spec + " is the --gpu spec file " + spec + same_input},
           {{"compare", config, "--gpus", "h100," + spec, "--emit-yaml", spec},
            "is the --gpus spec file"},
           {{config, "--output", dir / "r.json", "--emit-yaml", dir / "./r.json"},
            "--output " + (dir / "r.json") + " and --emit-yaml " + (dir / "./r.json") +
                same_output},
           {{"gemm", "8", "8", "8", "--output", dir / "p.html", "--html", dir / "sub/../p.html"},
            "--output " + (dir / "p.html") + " and --html"},
           {{"gemm", "8", "8", "8", "--output", dir / "c.svg", "--plot", dir / "c.svg"},
            "and --plot"},
           {{config, "--output", dir / "r.json", "--emit-yaml", dir / "dangling.yaml"},
            "--emit-yaml " + (dir / "dangling.yaml") +
                " is a symbolic link to a file that does not exist"}}) {
    CAPTURE(c.args);
    const cli_result r = run_cli(c.args);
    INFO("stderr: " << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty()); // refused before any work
    CHECK(contains(r.err, c.message));
    CHECK(read_text(config) == config_text);
    CHECK(fs::is_symlink(dir / "link.json"));
    CHECK_FALSE(fs::exists(dir / "r.json"));
    CHECK_FALSE(fs::exists(dir / "p.html"));
    CHECK_FALSE(fs::exists(dir / "c.svg"));
  }
  // Different files are fine.
  const cli_result ok = run_cli({config, "--gpu", spec, "--output", dir / "r.json", "--emit-yaml",
                                 dir / "net.yaml", "--plot", dir / "c.svg"});
  INFO("stderr: " << ok.err);
  CHECK(ok.status == 0);
  CHECK(read_text(config) == config_text);
}

TEST_CASE("--output through a symbolic link writes its target; a 0600 report stays 0600; a hard "
          "link keeps its other name") {
  // Before: the link became a regular file (its target stale), the report 0644, the other name
  // of a hard-linked report kept the old one.
  temp_dir dir;
  fs::create_directory(dir / "reports");
  std::ofstream(dir / "reports/r.json") << "old";
  fs::permissions(dir / "reports/r.json", fs::perms::owner_read | fs::perms::owner_write);
  fs::create_symlink("reports/r.json", dir / "latest.json");
  fs::create_hard_link(dir / "reports/r.json", dir / "reports/also.json");
  const cli_result r = run_cli({alexnet, "--gpu", "h100", "--output", dir / "latest.json"});
  INFO("stderr: " << r.err);
  CHECK(r.status == 0);
  CHECK(fs::is_symlink(dir / "latest.json"));
  const std::string report = read_text(dir / "reports/r.json");
  CHECK_FALSE(nlohmann::json::parse(report, nullptr, false).is_discarded());
  CHECK(read_text(dir / "reports/also.json") == report);
  CHECK(fs::status(dir / "reports/r.json").permissions() ==
        (fs::perms::owner_read | fs::perms::owner_write));
  CHECK(fs::hard_link_count(dir / "reports/r.json") == 2);

  // One name only: renamed over, and still 0600.
  fs::remove(dir / "reports/also.json");
  const cli_result again = run_cli({alexnet, "--gpu", "h100", "--output", dir / "latest.json"});
  CHECK(again.status == 0);
  CHECK(read_text(dir / "reports/r.json") == report);
  CHECK(fs::status(dir / "reports/r.json").permissions() ==
        (fs::perms::owner_read | fs::perms::owner_write));
  CHECK(dir.files().size() == 2); // reports and latest.json: no temporary file
}

TEST_CASE("--output to a FIFO writes through to its reader; the FIFO stays") {
  // Before: the FIFO was replaced by a regular file and its reader got nothing.
  temp_dir dir;
  const std::string fifo = dir / "fifo.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK); // no wait for a writer
  REQUIRE(reader >= 0);
  std::atomic<bool> finished{false};
  std::string received;
  // Read while the report is written: it is larger than a pipe holds.
  std::thread drain([&] {
    char buffer[65536];
    for (bool last = false; !last;) {
      last = finished.load();
      for (ssize_t n; (n = ::read(reader, buffer, sizeof buffer)) > 0;)
        received.append(buffer, static_cast<std::size_t>(n));
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  const cli_result r = run_cli({alexnet, "--gpu", "h100", "--output", fifo});
  finished = true;
  drain.join();
  ::close(reader);
  INFO("stderr: " << r.err);
  CHECK(r.status == 0);
  CHECK(fs::is_fifo(fifo));
  CHECK_FALSE(nlohmann::json::parse(received, nullptr, false).is_discarded());
}

TEST_CASE("--emit-yaml to a device writes through: the null device takes it, the full one fails "
          "with the OS's reason and a non-zero status; the node stays") {
  // Before, as root: the node was replaced by a regular file, exit 0.
  temp_dir dir;
  std::string null = dir / "null", full = dir / "full";
  const bool made = ::mknod(null.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0 &&
                    ::mknod(full.c_str(), S_IFCHR | 0666, makedev(1, 7)) == 0 &&
                    fs::is_character_file(null);
  if (!made) {
    if (::geteuid() == 0) { // never risk the system's own nodes as root
      MESSAGE("root, but no device nodes can be made here; skipped");
      return;
    }
    // Not root: the system's own, which we could not clobber (before, no temporary in /dev).
    null = "/dev/null";
    full = "/dev/full";
  }
  const std::string config = source_path("examples/configs/gpt2.json");
  const cli_result ok = run_cli({config, "--gpu", "h100", "--emit-yaml", null});
  INFO("stderr: " << ok.err);
  CHECK(ok.status == 0);
  CHECK(fs::is_character_file(null));
  const cli_result r = run_cli({config, "--gpu", "h100", "--emit-yaml", full});
  INFO("stderr: " << r.err);
  CHECK(r.status == 2);
  CHECK(contains(r.err, "--emit-yaml " + full + ": cannot write: No space left on device"));
  CHECK(fs::is_character_file(full));
}

// ------------------------------------------------------------------ names

TEST_CASE("names with terminal escapes, newlines and bidi controls are escaped in every human "
          "format") {
  temp_dir dir;
  const std::string net = dir / "escapes.yaml";
  {
    std::ofstream file(net);
    file << "name: \"net\\e[2J\\e]0;title\\a\\nsecond line\"\n"
            "layers:\n"
            "  - {name: \"fc\\e[31m|a,b\\\"c\\r\\n\\u009b\\u202e<img src=x>\", type: linear, in: "
            "64, "
            "out: 64}\n"
            "  - {name: \"h\xc3\xa9llo \xe2\x9c\x93 \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80\", "
            "type: relu}\n";
  }
  for (const std::string format : formats) {
    CAPTURE(format);
    const cli_result r = run_cli({net, "--gpu", "h100", "--format", format});
    INFO("stderr: " << r.err);
    REQUIRE(r.status == 0);
    CHECK(first_control(r.out) == -1);
    // Valid UTF-8 is kept as it is.
    CHECK(contains(r.out, "h\xc3\xa9llo \xe2\x9c\x93 \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80"));
    if (format != "json" && format != "svg") // the chart shows the slowest ops' names only
      CHECK(contains(r.out, "\\x1b[31m"));
    CHECK_FALSE(contains(r.out, "\xe2\x80\xae")); // U+202E, right-to-left override
  }
  const cli_result table = run_cli({net, "--gpu", "h100"});
  CHECK(contains(table.out, "net\\x1b[2J\\x1b]0;title\\x07\\nsecond line"));
  CHECK(contains(table.out, "fc\\x1b[31m|a,b\"c\\r\\n\\u009b\\u202e<img src=x>"));
  const cli_result markdown = run_cli({net, "--gpu", "h100", "--format", "markdown"});
  CHECK(contains(markdown.out, "| fc\\x1b[31m\\|a,b\"c\\r\\n\\u009b\\u202e&lt;img src=x> |"));
  CHECK_FALSE(contains(markdown.out, "<img"));
  // CSV: one line a row, the name quoted for its comma and quote.
  const cli_result csv = run_cli({net, "--gpu", "h100", "--format", "csv"});
  CHECK(contains(csv.out, "\n\"fc\\x1b[31m|a,b\"\"c\\r\\n\\u009b\\u202e<img src=x>\",forward,"));
  CHECK(std::count(csv.out.begin(), csv.out.end(), '\n') == 3);
  // JSON keeps the name exactly, its controls escaped as JSON escapes (C1 and bidi ones too).
  const cli_result json = run_cli({net, "--gpu", "h100", "--format", "json"});
  CHECK(contains(json.out, "\"fc\\u001b[31m|a,b\\\"c\\r\\n\\u009b\\u202e<img src=x>\""));
  CHECK(nlohmann::json::parse(json.out)["ops"][0]["layer"] ==
        "fc\x1b[31m|a,b\"c\r\n\xc2\x9b\xe2\x80\xae<img src=x>");
  // HTML and SVG: XML-escaped, no raw markup from a name.
  const cli_result html = run_cli({net, "--gpu", "h100", "--format", "html"});
  CHECK_FALSE(contains(html.out, "<img"));
  CHECK(contains(html.out, "&lt;img src=x&gt;"));
}

TEST_CASE("an error message naming a layer writes its escapes visibly") {
  temp_dir dir;
  const std::string net = dir / "bad.yaml";
  {
    std::ofstream file(net);
    file << "name: t\nlayers:\n  - {name: \"a\\e]0;pwned\\a\", type: relux}\n";
  }
  const cli_result r = run_cli({net, "--gpu", "h100"});
  CHECK(r.status == 2);
  CHECK(first_control(r.err.substr(0, r.err.size() - 1)) == -1); // the final line feed aside
  CHECK(contains(r.err, "layer `a\\x1b]0;pwned\\x07`"));
}

// ------------------------------------------------------------------ UTF-8

TEST_CASE("JSON takes any UTF-8, and a file name that is not UTF-8 becomes U+FFFD, not an "
          "exception") {
  // Before the fix: exit 1 with nlohmann's "[json.exception.type_error.316] invalid UTF-8 byte".
  temp_dir dir;
  const std::string net = dir / "n\xff\xfe.yaml";
  fs::copy_file(alexnet, net);
  for (const std::string format : formats) {
    CAPTURE(format);
    const cli_result r = run_cli({net, "--gpu", "h100", "--format", format});
    INFO("stderr: " << r.err);
    CHECK(r.status == 0);
    CHECK_FALSE(contains(r.err, "json.exception"));
  }
  const cli_result r = run_cli({net, "--gpu", "h100", "--format", "json"});
  const nlohmann::json report = nlohmann::json::parse(r.out);
  CHECK(report["network"]["origin"].get<std::string>().find("n\xEF\xBF\xBD\xEF\xBF\xBD.yaml") !=
        std::string::npos);
}

TEST_CASE("text that is not UTF-8 is a located input error in a network, a spec and a config") {
  temp_dir dir;
  const auto write = [&](const std::string &name, const std::string &text) {
    std::ofstream(dir / name, std::ios::binary) << text;
    return dir / name;
  };
  const std::string net = write("n.yaml", "name: t\nlayers:\n  - {name: \"f\xe9\", type: relu, "
                                          "features: 8}\n");
  const std::string spec = write("s.yaml", "name: x\ndisplay_name: caf\xc3\n");
  const std::string config = write("c.json", "{\n  \"model_type\": \"llama\xff\"\n}\n");
  for (const auto &[args, where] :
       {std::pair{std::vector<std::string>{net, "--gpu", "h100"}, net + ":3:14: "},
        std::pair{std::vector<std::string>{"gemm", "8", "8", "8", "--gpu", spec}, spec + ":2:18: "},
        std::pair{std::vector<std::string>{config, "--gpu", "h100"}, config + ":2:23: "}}) {
    const cli_result r = run_cli(args);
    INFO("stderr: " << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(contains(r.err, where + "not valid UTF-8 at byte 0x"));
  }
}

TEST_CASE("a config.json holding what JSON allows and YAML does not is read") {
  // Python's json.dumps (ensure_ascii, its default) writes U+1F600 as a surrogate pair.
  temp_dir dir;
  std::string text = read_text(source_path("examples/configs/gpt2.json"));
  const auto brace = text.find('{');
  REQUIRE(brace != std::string::npos);
  text.insert(brace + 1, "\n  \"note\": \"\\ud83d\\ude00 \x7f \xc2\x85 \xe2\x80\xa8\",");
  std::ofstream(dir / "gpt2.json", std::ios::binary) << text;
  const cli_result r = run_cli({dir / "gpt2.json", "--gpu", "h100", "--format", "json"});
  INFO("stderr: " << r.err);
  CHECK(r.status == 0);
}

// ------------------------------------------------------------------ the first screen

namespace {

/// The widest line of `text`, in code points.
std::size_t widest_line(const std::string &text) {
  std::size_t widest = 0, width = 0;
  for (const char c : text) {
    if (c == '\n') {
      widest = std::max(widest, width);
      width = 0;
    } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
      ++width;
    }
  }
  return std::max(widest, width);
}

} // namespace

TEST_CASE("the default table fits 120 columns; --wide has every column, --columns the named") {
  const std::string llama = source_path("examples/configs/llama-3-8b.json");
  const std::vector<std::vector<std::string>> commands = {
      {llama, "--gpu", "h100"},
      {llama, "--gpu", "h100", "--mode", "training"},
      {source_path("examples/resnet50.yaml"), "--gpu", "a100"},
      {"compare", llama, "--gpus", "h100,a100,l40s"},
      {"compare", llama, "--gpus", "h100,h200,a100-80gb", "--tp", "1,2", "--price",
       "h100=3,h200=4,a100-80gb=2"},
      {"compare", llama, "--gpus", "h100,h200,l40s", "--prompt-tokens", "2048", "--output-tokens",
       "256", "--ttft", "500", "--tpot", "50"},
      {"specs"}};
  for (const std::vector<std::string> &args : commands) {
    CAPTURE(args.front());
    const cli_result r = run_cli(args);
    REQUIRE(r.status == 0);
    CHECK(widest_line(r.out) <= 120);
    std::vector<std::string> wide = args;
    wide.push_back("--wide");
    CHECK(widest_line(run_cli(wide).out) > 120);
  }
  const auto header = [](const std::string &out) { // the ops table's
    const std::size_t at = out.find("\nlayer ");
    return at == std::string::npos ? std::string{} : out.substr(at, out.find('\n', at + 1) - at);
  };
  CHECK(contains(header(run_cli({llama, "--gpu", "h100", "--wide"}).out), "host floor"));
  CHECK_FALSE(contains(header(run_cli({llama, "--gpu", "h100"}).out), "host floor"));
  const cli_result chosen = run_cli({llama, "--gpu", "h100", "--columns", "device,Ridge"});
  REQUIRE(chosen.status == 0);
  std::istringstream words(header(chosen.out));
  CHECK(std::vector<std::string>(std::istream_iterator<std::string>(words), {}) ==
        std::vector<std::string>{"layer", "ridge", "device"});
  // The batch table has none of them: it keeps its own columns.
  CHECK(contains(chosen.out, "compute-bound from"));
  // CSV and JSON have every column whatever the table shows.
  CHECK(contains(run_cli({llama, "--gpu", "h100", "-f", "csv"}).out, "host_floor_us"));
}
