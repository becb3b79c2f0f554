// LoadDomainKey (include/braid/options.h): a domain key from a file.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "braid/options.h"
#include "openssl/crypto.h"

namespace braid {
namespace {

constexpr size_t kRawKeyBytes = 32;
constexpr size_t kHexKeyChars = 2 * kRawKeyBytes;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

absl::Status OpenError(const std::string& path, int err) {
  const std::string what =
      absl::StrCat("key file ", path, ": ", std::strerror(err));
  if (err == ENOENT || err == ENOTDIR) return absl::NotFoundError(what);
  if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(what);
  return absl::UnavailableError(what);
}

absl::Status WrongSize(const std::string& path, size_t bytes) {
  return absl::InvalidArgumentError(absl::StrCat(
      "key file ", path, ": ", bytes, " bytes; expected ", kRawKeyBytes,
      " raw bytes or ", kHexKeyChars, " hex digits (and an optional newline)"));
}

// The key in `text` (the whole file), or an error naming `path`.
absl::StatusOr<std::string> DecodeKey(const std::string& path,
                                      std::string_view text) {
  if (text.size() == kRawKeyBytes) return std::string(text);
  const size_t file_bytes = text.size();
  if (text.size() == kHexKeyChars + 1 && text.back() == '\n') {
    text.remove_suffix(1);
  }
  if (text.size() != kHexKeyChars) return WrongSize(path, file_bytes);
  std::string key(kRawKeyBytes, '\0');
  for (size_t i = 0; i < kRawKeyBytes; ++i) {
    const int hi = HexValue(text[2 * i]);
    const int lo = HexValue(text[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      OPENSSL_cleanse(key.data(), key.size());
      const size_t at = hi < 0 ? 2 * i : 2 * i + 1;
      return absl::InvalidArgumentError(
          absl::StrFormat("key file %s: character %u (0x%02x) is not a hex "
                          "digit",
                          path, at, static_cast<uint8_t>(text[at])));
    }
    key[i] = static_cast<char>(hi << 4 | lo);
  }
  return key;
}

// Reads the whole (small) file behind `fd` into `out`.
absl::Status ReadAll(const std::string& path, int fd, size_t size,
                     std::string* out) {
  out->assign(size, '\0');
  size_t got = 0;
  while (got < size) {
    const ssize_t n = read(fd, out->data() + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return OpenError(path, errno);
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got != size) {
    return absl::UnavailableError(
        absl::StrCat("key file ", path, ": changed size while being read"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> LoadDomainKey(absl::string_view path_view) {
  const std::string path(path_view);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return OpenError(path, errno);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return OpenError(path, err);
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return absl::InvalidArgumentError(
        absl::StrCat("key file ", path, ": not a regular file"));
  }
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    close(fd);
    return absl::PermissionDeniedError(absl::StrFormat(
        "key file %s: accessible by group or others (mode %04o); chmod 600 it",
        path, st.st_mode & 07777));
  }
  // Anything longer than a hex key and its newline is the wrong size; say
  // so without reading it.
  const size_t size = static_cast<size_t>(st.st_size);
  if (size > kHexKeyChars + 1) {
    close(fd);
    return WrongSize(path, size);
  }
  std::string text;
  const absl::Status read = ReadAll(path, fd, size, &text);
  close(fd);
  absl::StatusOr<std::string> key =
      read.ok() ? DecodeKey(path, text) : absl::StatusOr<std::string>(read);
  OPENSSL_cleanse(text.data(), text.size());
  return key;
}

}  // namespace braid
