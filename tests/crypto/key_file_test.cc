// Tests for LoadDomainKey: the two accepted file formats and one case per
// error. Every file lives in a fresh temporary directory removed afterwards.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "braid/options.h"
#include "gtest/gtest.h"

namespace braid {
namespace {

class KeyFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/braid_key_file_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes `content` to a new file with permissions `mode`; returns its path.
  std::string Write(const std::string& name, const std::string& content,
                    mode_t mode = 0600) {
    const std::string path = dir_ + "/" + name;
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(write(fd, content.data(), content.size()),
              static_cast<ssize_t>(content.size()));
    close(fd);
    EXPECT_EQ(chmod(path.c_str(), mode), 0);
    return path;
  }

  std::string dir_;
};

// 32 bytes 0x00, 0x01, ... 0x1f and their hex spelling.
std::string RawKey() {
  std::string k(32, '\0');
  for (int i = 0; i < 32; ++i) k[i] = static_cast<char>(i);
  return k;
}
constexpr char kHexKey[] =
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

TEST_F(KeyFileTest, ThirtyTwoRawBytesAreTheKeyAsIs) {
  std::string raw = RawKey();
  raw[10] = '\n';  // raw bytes may be anything, a newline too
  absl::StatusOr<std::string> k = LoadDomainKey(Write("raw", raw));
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(*k, raw);
}

TEST_F(KeyFileTest, SixtyFourHexDigitsWithOrWithoutNewlineDecode) {
  for (const std::string& text :
       {std::string(kHexKey), std::string(kHexKey) + "\n"}) {
    absl::StatusOr<std::string> k = LoadDomainKey(Write("hex", text));
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_EQ(*k, RawKey());
  }
  std::string upper(kHexKey);
  for (char& c : upper) c = static_cast<char>(std::toupper(c));
  absl::StatusOr<std::string> k = LoadDomainKey(Write("upper", upper));
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(*k, RawKey());
}

TEST_F(KeyFileTest, MissingFileIsNotFoundNamingThePath) {
  const std::string path = dir_ + "/absent";
  absl::StatusOr<std::string> k = LoadDomainKey(path);
  EXPECT_EQ(k.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(k.status().message().find(path), std::string::npos);
}

TEST_F(KeyFileTest, WrongSizesAreErrorsStatingSizeAndFormats) {
  const std::string hex(kHexKey);
  for (const std::string& text :
       {std::string(), std::string(31, 'k'), std::string(33, 'k'),
        hex.substr(0, 63), hex + "\n\n", hex + "\r\n", hex + "0",
        std::string(4096, 'k')}) {
    absl::StatusOr<std::string> k = LoadDomainKey(Write("sized", text));
    ASSERT_FALSE(k.ok()) << text.size();
    EXPECT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(k.status().message().find(std::to_string(text.size()) +
                                        " bytes; expected 32 raw bytes or 64 "
                                        "hex digits"),
              std::string::npos)
        << k.status();
  }
}

TEST_F(KeyFileTest, NonHexCharacterIsAnErrorNamingItsPosition) {
  std::string text(kHexKey);
  text[17] = 'g';
  absl::StatusOr<std::string> k = LoadDomainKey(Write("badhex", text));
  EXPECT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(k.status().message().find("character 17 (0x67)"), std::string::npos)
      << k.status();
  text = std::string(kHexKey) + " ";  // 65 bytes, not ending in a newline
  k = LoadDomainKey(Write("space", text));
  EXPECT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(KeyFileTest, FileAccessibleByGroupOrOthersIsRefused) {
  for (mode_t mode : {0644, 0640, 0604, 0602, 0620}) {
    absl::StatusOr<std::string> k =
        LoadDomainKey(Write("open", RawKey(), mode));
    ASSERT_FALSE(k.ok()) << std::oct << mode;
    EXPECT_EQ(k.status().code(), absl::StatusCode::kPermissionDenied);
    EXPECT_NE(k.status().message().find("chmod 600"), std::string::npos);
  }
  EXPECT_TRUE(LoadDomainKey(Write("owner_only", RawKey(), 0400)).ok());
}

TEST_F(KeyFileTest, DirectoryIsNotAKeyFile) {
  ASSERT_EQ(chmod(dir_.c_str(), 0700), 0);
  absl::StatusOr<std::string> k = LoadDomainKey(dir_);
  EXPECT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(k.status().message().find("not a regular file"), std::string::npos);
}

}  // namespace
}  // namespace braid
