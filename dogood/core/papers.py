"""The papers dogood's shifts come from, with full citations, and how a shift relates to each.

A shift declares ``papers = (Cites("moradi", "Table 1", inspired_by="..."), ...)``;
the data card and ``dogood describe`` print the citations from this table, so
no other module names a paper or a shift.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Citation:
    """One paper: authors, title, venue and year, and where to read it."""

    authors: str
    title: str
    venue: str
    year: int
    url: str = ""

    def markdown(self) -> str:
        link = f" <{self.url}>" if self.url else ""
        return f"{self.authors}. *{self.title}.* {self.venue}, {self.year}.{link}"


@dataclass(frozen=True)
class Cites:
    """A shift's debt to a paper.

    ``section``: where in the paper the method is. ``inspired_by``: empty when
    the shift follows the paper's reference code or its exact description;
    otherwise the shift follows only the paper's idea, and the text says how
    it differs (printed after "inspired by" in ``describe`` and the card).
    """

    key: str
    section: str = ""
    inspired_by: str = ""

    @property
    def citation(self) -> Citation:
        return CITATIONS[self.key]


#: Every paper a shift or card cites, in the order cards list them (Do-GOOD, the method, first).
CITATIONS: dict[str, Citation] = {
    "do-good": Citation(
        "Jiabang He, Yi Hu, Lei Wang, Xing Xu, Ning Liu, Hui Liu and Heng Tao Shen",
        "Do-GOOD: Towards Distribution Shift Evaluation for Pre-Trained Visual Document Understanding Models",
        "SIGIR", 2023, "https://arxiv.org/abs/2306.02623"),
    "form-attacks": Citation(
        "Le Xue, Mingfei Gao, Zeyuan Chen, Caiming Xiong and Ran Xu",
        "Robustness Evaluation of Transformer-based Form Field Extractors via Form Attacks",
        "arXiv:2110.04413", 2021, "https://arxiv.org/abs/2110.04413"),
    "moradi": Citation(
        "Milad Moradi and Matthias Samwald",
        "Evaluating the Robustness of Neural Language Models to Input Perturbations",
        "EMNLP", 2021, "https://arxiv.org/abs/2108.12237"),
    "bert-attack": Citation(
        "Linyang Li, Ruotian Ma, Qipeng Guo, Xiangyang Xue and Xipeng Qiu",
        "BERT-ATTACK: Adversarial Attack Against BERT Using BERT",
        "EMNLP", 2020, "https://arxiv.org/abs/2004.09984"),
    "textattack": Citation(
        "John X. Morris, Eli Lifland, Jin Yong Yoo, Jake Grigsby, Di Jin and Yanjun Qi",
        "TextAttack: A Framework for Adversarial Attacks, Data Augmentation, and Adversarial Training in NLP",
        "EMNLP (System Demonstrations)", 2020, "https://arxiv.org/abs/2005.05909"),
    "counter-fitting": Citation(
        "Nikola Mrkšić, Diarmuid Ó Séaghdha, Blaise Thomson, Milica Gašić, Lina Rojas-Barahona, Pei-Hao Su, "
        "David Vandyke, Tsung-Hsien Wen and Steve Young",
        "Counter-fitting Word Vectors to Linguistic Constraints",
        "NAACL-HLT", 2016, "https://arxiv.org/abs/1603.00892"),
    "coco": Citation(
        "Tsung-Yi Lin, Michael Maire, Serge Belongie, James Hays, Pietro Perona, Deva Ramanan, Piotr Dollár "
        "and C. Lawrence Zitnick",
        "Microsoft COCO: Common Objects in Context",
        "ECCV", 2014, "https://arxiv.org/abs/1405.0312"),
    "docunet": Citation(
        "Ke Ma, Zhixin Shu, Xue Bai, Jue Wang and Dimitris Samaras",
        "DocUNet: Document Image Unwarping via a Stacked U-Net",
        "CVPR", 2018),
    "funsd": Citation(
        "Guillaume Jaume, Hazım Kemal Ekenel and Jean-Philippe Thiran",
        "FUNSD: A Dataset for Form Understanding in Noisy Scanned Documents",
        "ICDAR Workshops (OST)", 2019, "https://arxiv.org/abs/1905.13538"),
    "guo-calibration": Citation(
        "Chuan Guo, Geoff Pleiss, Yu Sun and Kilian Q. Weinberger",
        "On Calibration of Modern Neural Networks",
        "ICML", 2017, "https://arxiv.org/abs/1706.04599"),
    "msp-baseline": Citation(
        "Dan Hendrycks and Kevin Gimpel",
        "A Baseline for Detecting Misclassified and Out-of-Distribution Examples in Neural Networks",
        "ICLR", 2017, "https://arxiv.org/abs/1610.02136"),
    "rvl-cdip-ood": Citation(
        "Stefan Larson, Gordon Lim, Yutong Ai, David Kuang and Kevin Leach",
        "Evaluating Out-of-Distribution Performance on Document Image Classifiers",
        "NeurIPS Datasets and Benchmarks", 2022, "https://arxiv.org/abs/2210.07448"),
    "layoutlmv3": Citation(
        "Yupan Huang, Tengchao Lv, Lei Cui, Yutong Lu and Furu Wei",
        "LayoutLMv3: Pre-training for Document AI with Unified Text and Image Masking",
        "ACM Multimedia", 2022, "https://arxiv.org/abs/2204.08387"),
    "imagenet-c": Citation(
        "Dan Hendrycks and Thomas Dietterich",
        "Benchmarking Neural Network Robustness to Common Corruptions and Perturbations",
        "ICLR", 2019, "https://arxiv.org/abs/1903.12261"),
    "rodla": Citation(
        "Yufan Chen, Jiaming Zhang, Kunyu Peng, Junwei Zheng, Ruiping Liu, Philip Torr and Rainer Stiefelhagen",
        "RoDLA: Benchmarking the Robustness of Document Layout Analysis Models",
        "CVPR", 2024, "https://arxiv.org/abs/2403.14442"),
    "augraphy": Citation(
        "Alexander Groleau, Kok Wei Chee, Stefan Larson, Samay Maini and Jonathan Boarman",
        "Augraphy: A Data Augmentation Library for Document Images",
        "ICDAR", 2023, "https://arxiv.org/abs/2208.14558"),
}
